//go:build integration

package deltalog_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// compatExpected is the expected.json that scripts/py/make_tables.py writes next to
// each table: what the engine that wrote the table reads back from it.
type compatExpected struct {
	Engine           string                `json:"engine"`
	Case             string                `json:"case"`
	Version          int64                 `json:"version"`
	Schema           []compatExpectedField `json:"schema"`
	PartitionColumns []string              `json:"partition_columns"`
	Rows             []map[string]any      `json:"rows"`
	NumRows          int                   `json:"num_rows"`
	Txns             map[string]*int64     `json:"txns"`
	Protocol         *struct {
		MinReaderVersion int      `json:"minReaderVersion"`
		MinWriterVersion int      `json:"minWriterVersion"`
		ReaderFeatures   []string `json:"readerFeatures"`
		WriterFeatures   []string `json:"writerFeatures"`
	} `json:"protocol"`
	TimeTravel []struct {
		Version int64                 `json:"version"`
		Schema  []compatExpectedField `json:"schema"`
		Rows    []map[string]any      `json:"rows"`
	} `json:"time_travel"`
}

type compatExpectedField struct {
	Name     string `json:"name"`
	Type     any    `json:"type"`
	Nullable *bool  `json:"nullable"`
}

func (e compatExpectedField) field() fulltier.Field {
	return fulltier.Field{Name: e.Name, Type: e.Type, Nullable: e.Nullable}
}

func compatExpectedFields(fs []compatExpectedField) []compatField {
	out := make([]fulltier.Field, len(fs))
	for i, f := range fs {
		out[i] = f.field()
	}
	return engineFields(out)
}

func loadCompatExpected(t *testing.T, dir string) compatExpected {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	require.NoError(t, err)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var e compatExpected
	require.NoError(t, dec.Decode(&e), "decoding %s/expected.json", dir)
	require.Len(t, e.Rows, e.NumRows)
	return e
}

// compatTableDirs lists the subdirectories of root that hold an expected.json.
func compatTableDirs(t *testing.T, root string) []string {
	t.Helper()
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	var dirs []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(root, e.Name(), "expected.json")); err == nil {
			dirs = append(dirs, filepath.Join(root, e.Name()))
		}
	}
	slices.Sort(dirs)
	return dirs
}

// requireReadsLikeWriter reads the table in dir with deltalog and datafile and checks
// it against the writer engine's own read-back: version, schema, partition columns,
// rows, txn versions, protocol, and the rows of older versions (time travel).
func requireReadsLikeWriter(t *testing.T, dir string) {
	t.Helper()
	want := loadCompatExpected(t, dir)
	got := readLocal(t, dir, nil)
	snap := got.Snapshot

	require.Equal(t, want.Version, snap.Version(), "version")
	wantFields := compatExpectedFields(want.Schema)
	requireSameSchema(t, wantFields, got.Fields, "schema")
	require.Equal(t, want.PartitionColumns, nonNil(snap.Metadata().PartitionColumns), "partition columns")
	require.Equal(t, engineRows(t, wantFields, want.Rows), got.Rows, "rows at version %d", want.Version)
	for app, v := range want.Txns {
		ours, ok := snap.TxnVersion(app)
		if v == nil {
			require.False(t, ok, "txn %q should be absent, got %d", app, ours)
			continue
		}
		require.True(t, ok, "txn %q missing", app)
		require.Equal(t, *v, ours, "txn %q", app)
	}
	if want.Protocol != nil {
		p := snap.Protocol()
		require.Equal(t, want.Protocol.MinReaderVersion, p.MinReaderVersion, "minReaderVersion")
		require.Equal(t, want.Protocol.MinWriterVersion, p.MinWriterVersion, "minWriterVersion")
		require.ElementsMatch(t, want.Protocol.ReaderFeatures, p.ReaderFeatures, "readerFeatures")
		require.ElementsMatch(t, want.Protocol.WriterFeatures, p.WriterFeatures, "writerFeatures")
	}
	if cp, ok := latestCheckpoint(t, dir); ok && cp > 0 {
		// The same read from a copy whose commits before the checkpoint are gone, so that
		// the latest state can only come from the checkpoint (classic, multi-part or v2).
		cut := withoutCommitsBefore(t, dir, cp)
		again := readLocal(t, cut, nil)
		require.Equal(t, engineRows(t, wantFields, want.Rows), again.Rows,
			"rows at version %d from checkpoint %d alone", want.Version, cp)
	}
	for _, tt := range want.TimeTravel {
		old := readLocal(t, dir, &tt.Version)
		fields := compatExpectedFields(tt.Schema)
		requireSameSchema(t, fields, old.Fields, "schema at version %d", tt.Version)
		require.Equal(t, engineRows(t, fields, tt.Rows), old.Rows, "rows at version %d", tt.Version)
	}
}

// latestCheckpoint returns the newest version that has a checkpoint file of any kind.
func latestCheckpoint(t *testing.T, dir string) (int64, bool) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, "_delta_log"))
	require.NoError(t, err)
	best, found := int64(-1), false
	for _, e := range entries {
		name := e.Name()
		if len(name) < 32 || name[20:32] != ".checkpoint." {
			continue
		}
		v, err := strconv.ParseInt(name[:20], 10, 64)
		if err == nil && v > best {
			best, found = v, true
		}
	}
	return best, found
}

// withoutCommitsBefore copies the table in dir and deletes the commit files of versions
// below cp from the copy; the commit at cp itself stays, as log cleanup leaves it.
func withoutCommitsBefore(t *testing.T, dir string, cp int64) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), filepath.Base(dir))
	require.NoError(t, os.CopyFS(out, os.DirFS(dir)))
	for v := range cp {
		for _, suffix := range []string{".json", ".crc"} {
			err := os.Remove(filepath.Join(out, "_delta_log", fmt.Sprintf("%020d%s", v, suffix)))
			if err != nil && !os.IsNotExist(err) {
				require.NoError(t, err)
			}
		}
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// TestCompatGoldenTables reads the committed fixtures of testdata/tables, made by
// make_tables.py with pinned delta-rs and Spark, with deltalog.
func TestCompatGoldenTables(t *testing.T) {
	dirs := compatTableDirs(t, filepath.Join("testdata", "tables"))
	require.NotEmpty(t, dirs)
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) { requireReadsLikeWriter(t, dir) })
	}
}

// TestCompatReadForeignTables makes fresh tables with the venv's delta-rs and Spark
// (merges, deletes, updates, checkpoints of every kind, deletion vectors, column
// mapping renames and drops, awkward partition values) and reads them with deltalog.
func TestCompatReadForeignTables(t *testing.T) {
	for _, engine := range []string{"deltars", "spark"} {
		t.Run(engine, func(t *testing.T) {
			out := t.TempDir()
			// One invocation per engine: Spark starts once for all its cases.
			fulltier.Python(t, "make_tables.py", "--engine", engine, "--out", out)
			dirs := compatTableDirs(t, out)
			require.NotEmpty(t, dirs)
			for _, dir := range dirs {
				t.Run(filepath.Base(dir), func(t *testing.T) { requireReadsLikeWriter(t, dir) })
			}
		})
	}
}
