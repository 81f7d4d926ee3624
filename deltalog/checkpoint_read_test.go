package deltalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"
)

// ckptState is the table state a list of actions describes, keyed for comparisons.
type ckptState struct {
	protocol *Protocol
	metadata *Metadata
	txns     map[string]Txn
	adds     map[string]*Add
	removes  map[string]*Remove
	domains  map[string]DomainMetadata
}

// ckptFileKey keys a logical file by path and DV, as log replay does.
func ckptFileKey(path string, dv *DeletionVector) string {
	if dv == nil {
		return path
	}
	k := path + "|" + dv.StorageType + dv.PathOrInlineDV
	if dv.Offset != nil {
		k += fmt.Sprintf("@%d", *dv.Offset)
	}
	return k
}

// ckptStateOf folds actions in order, as log replay does.
func ckptStateOf(actions []Action) ckptState {
	st := ckptState{txns: map[string]Txn{}, adds: map[string]*Add{}, removes: map[string]*Remove{}, domains: map[string]DomainMetadata{}}
	for _, a := range actions {
		switch {
		case a.Protocol != nil:
			st.protocol = a.Protocol
		case a.Metadata != nil:
			st.metadata = a.Metadata
		case a.Txn != nil:
			st.txns[a.Txn.AppID] = *a.Txn
		case a.Add != nil:
			k := ckptFileKey(a.Add.Path, a.Add.DeletionVector)
			st.adds[k] = a.Add
			delete(st.removes, k)
		case a.Remove != nil:
			k := ckptFileKey(a.Remove.Path, a.Remove.DeletionVector)
			delete(st.adds, k)
			st.removes[k] = a.Remove
		case a.DomainMetadata != nil:
			st.domains[a.DomainMetadata.Domain] = *a.DomainMetadata
		}
	}
	return st
}

// ckptCommits reads the JSON commits 0..version of a store.
func ckptCommits(t *testing.T, s Store, version int64) []Action {
	t.Helper()
	var all []Action
	for v := int64(0); v <= version; v++ {
		p := fmt.Sprintf("_delta_log/%020d.json", v)
		rc, err := s.Get(t.Context(), p)
		require.NoError(t, err)
		data, err := io.ReadAll(rc)
		require.NoError(t, err)
		require.NoError(t, rc.Close())
		acts, err := parseCommit(p, data)
		require.NoError(t, err)
		all = append(all, acts...)
	}
	return all
}

// normStats makes two stats JSON strings comparable across writers: numbers as float64
// and timestamps, which engines format differently, as UTC instants in milliseconds.
// Boolean bounds are dropped: delta-rs writes them in its JSON stats but its stats_parsed
// schema has no column for them (and Spark collects none).
func normStats(t *testing.T, s string) any {
	t.Helper()
	st, ok, err := ParseStats(s)
	require.NoError(t, err)
	require.True(t, ok, "stats %q", s)
	return map[string]any{
		"numRecords":  st.NumRecords,
		"minValues":   dropBools(normStatsValue(st.MinValues)),
		"maxValues":   dropBools(normStatsValue(st.MaxValues)),
		"nullCount":   normStatsValue(st.NullCount),
		"tightBounds": st.TightBounds,
	}
}

func dropBools(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	for k, e := range m {
		if _, isBool := e.(bool); isBool {
			delete(m, k)
		} else {
			m[k] = dropBools(e)
		}
	}
	return m
}

func normStatsValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = normStatsValue(e)
		}
		return out
	case json.Number:
		f, err := v.Float64()
		if err != nil {
			return v.String()
		}
		return f
	case string:
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999"} {
			if ts, err := time.Parse(layout, v); err == nil {
				return ts.UTC().Truncate(time.Millisecond).Format(time.RFC3339Nano)
			}
		}
		return v
	}
	return v
}

func lastCheckpointOf(t *testing.T, s Store) *LastCheckpoint {
	t.Helper()
	lc, err := readLastCheckpoint(t.Context(), s)
	require.NoError(t, err)
	require.NotNil(t, lc)
	return lc
}

// TestReadCheckpointFixtures reads the checkpoints written by delta-rs 1.6.6 and Spark
// (see testdata/checkpoints/make_*fixtures.py) and compares each with the state the
// table's JSON commits describe. deltars-struct-only has no stats JSON in its checkpoint,
// so its stats come from re-encoding stats_parsed; the Spark tables use column mapping,
// deletion vectors and v2 checkpoints with sidecars.
func TestReadCheckpointFixtures(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "checkpoints", "*", "_delta_log", "_last_checkpoint"))
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	for _, lcPath := range dirs {
		root := filepath.Dir(filepath.Dir(lcPath))
		t.Run(filepath.Base(root), func(t *testing.T) {
			s := loadCkptTestStore(t, root)
			lc := lastCheckpointOf(t, s)
			prefix := fmt.Sprintf("_delta_log/%020d.checkpoint", lc.Version)
			var cps []string
			for o, err := range s.List(t.Context(), prefix, "") {
				require.NoError(t, err)
				cps = append(cps, o.Path)
			}
			require.NotEmpty(t, cps)
			if lc.V2Checkpoint != nil {
				require.Contains(t, cps, "_delta_log/"+lc.V2Checkpoint.Path)
			}
			want := ckptStateOf(ckptCommits(t, s, lc.Version))
			for _, cp := range cps {
				acts, err := readCheckpoint(t.Context(), s, []string{cp})
				require.NoError(t, err, cp)
				if lc.V2Checkpoint == nil {
					require.Len(t, acts, int(lc.Size))
				}
				ckptRequireSameState(t, want, ckptStateOf(acts))
			}
		})
	}
}

func ckptRequireSameState(t *testing.T, want, got ckptState) {
	t.Helper()
	require.Equal(t, want.protocol, got.protocol)
	require.Equal(t, want.metadata, got.metadata)
	require.Equal(t, want.txns, got.txns)
	require.Equal(t, want.domains, got.domains)
	require.Equal(t, len(want.adds), len(got.adds))
	for k, w := range want.adds {
		g, ok := got.adds[k]
		require.True(t, ok, "add %s missing", k)
		require.Equal(t, w.PartitionValues, g.PartitionValues, k)
		require.Equal(t, w.Size, g.Size)
		require.Equal(t, w.ModificationTime, g.ModificationTime)
		require.Equal(t, w.DeletionVector, g.DeletionVector)
		require.Equal(t, w.BaseRowID, g.BaseRowID)
		require.Equal(t, w.DefaultRowCommitVersion, g.DefaultRowCommitVersion)
		require.Equal(t, normStats(t, w.Stats), normStats(t, g.Stats), k)
	}
	require.Equal(t, len(want.removes), len(got.removes))
	for k, w := range want.removes {
		g, ok := got.removes[k]
		require.True(t, ok, "remove %s missing", k)
		require.Equal(t, w.Size, g.Size)
		require.Equal(t, w.PartitionValues, g.PartitionValues)
		require.Equal(t, w.DeletionTimestamp, g.DeletionTimestamp)
		require.Equal(t, w.DeletionVector, g.DeletionVector)
	}
}

// TestReadCheckpointStatsParsedMatchesJSON decodes the fixture checkpoints that carry both
// stats forms (delta-rs with writeStatsAsStruct, Spark by default; column-mapped physical
// names, decimals, dates, timestamps, nested structs) and checks, row by row, that
// re-encoding stats_parsed gives the stats JSON string.
func TestReadCheckpointStatsParsedMatchesJSON(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "checkpoints", "*", "_delta_log", "*.parquet"))
	require.NoError(t, err)
	sidecars, err := filepath.Glob(filepath.Join("testdata", "checkpoints", "*", "_delta_log", "_sidecars", "*.parquet"))
	require.NoError(t, err)
	tested := 0
	for _, file := range append(files, sidecars...) {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		f, full := ckptOpenForTest(t, data)
		if withoutParsedColumns(f.Root()) == nil || full.add.stats.col < 0 {
			continue
		}
		t.Run(file, func(t *testing.T) {
			withJSON, err := decodeParquetCheckpoint(t.Context(), "cp", data)
			require.NoError(t, err)
			// That read skipped the _parsed columns; decoding every column gives the same.
			require.Equal(t, ckptDecodeAll(t, f, full), withJSON)

			// Decode again with the stats column hidden from the decoder.
			_, dec := ckptOpenForTest(t, data)
			dec.add.stats = leafRef{col: -1}
			reencoded := ckptDecodeAll(t, f, dec)
			require.Equal(t, len(withJSON), len(reencoded))
			n := 0
			for i := range withJSON {
				if withJSON[i].Add == nil || withJSON[i].Add.Stats == "" {
					continue
				}
				n++
				require.NotEmpty(t, reencoded[i].Add.Stats)
				require.Equal(t, normStats(t, withJSON[i].Add.Stats), normStats(t, reencoded[i].Add.Stats))
			}
			require.NotZero(t, n)
		})
		tested++
	}
	require.GreaterOrEqual(t, tested, 3)
}

func TestReadCheckpointMultiPart(t *testing.T) {
	state := ckptSampleState(30)
	rows, opts, err := checkpointRowsOf(state)
	require.NoError(t, err)
	part1, err := encodeCheckpointRows(rows[:10], opts, true)
	require.NoError(t, err)
	part2, err := encodeCheckpointRows(rows[10:], opts, true)
	require.NoError(t, err)
	s := newCkptTestStore()
	paths := []string{
		"_delta_log/00000000000000000009.checkpoint.0000000001.0000000002.parquet",
		"_delta_log/00000000000000000009.checkpoint.0000000002.0000000002.parquet",
	}
	s.files[paths[0]], s.files[paths[1]] = part1, part2

	got, err := readCheckpoint(t.Context(), s, paths)
	require.NoError(t, err)
	require.Equal(t, ckptAsCheckpointed(rows), got)
}

// ckptV2Row is a v2 top-level checkpoint row laid out as delta-rs does it: required
// fields, required lists and maps. Reading it checks we do not depend on our own layout.
type ckptV2Row struct {
	CheckpointMetadata *struct {
		Version int64 `parquet:"version"`
	} `parquet:"checkpointMetadata,optional"`
	Sidecar *struct {
		Path             string `parquet:"path"`
		SizeInBytes      int64  `parquet:"sizeInBytes"`
		ModificationTime int64  `parquet:"modificationTime"`
	} `parquet:"sidecar,optional"`
	Protocol *struct {
		MinReaderVersion int32    `parquet:"minReaderVersion"`
		MinWriterVersion int32    `parquet:"minWriterVersion"`
		ReaderFeatures   []string `parquet:"readerFeatures,list"`
		WriterFeatures   []string `parquet:"writerFeatures,list"`
	} `parquet:"protocol,optional"`
	Metadata *struct {
		ID               string            `parquet:"id"`
		SchemaString     string            `parquet:"schemaString"`
		PartitionColumns []string          `parquet:"partitionColumns,list"`
		Configuration    map[string]string `parquet:"configuration"`
	} `parquet:"metaData,optional"`
}

func TestReadCheckpointV2(t *testing.T) {
	adds := ckptSampleState(12)[5:] // two removes and twelve adds
	side1, err := encodeCheckpointRows(adds[:6], checkpointSchemaOptions{}, true)
	require.NoError(t, err)
	side2, err := encodeCheckpointRows(adds[6:], checkpointSchemaOptions{}, true)
	require.NoError(t, err)

	protocol := &Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"v2Checkpoint"}, WriterFeatures: []string{"v2Checkpoint"}}
	metadata := &Metadata{ID: "id", SchemaString: "{}", PartitionColumns: []string{}, Configuration: map[string]string{"delta.checkpointPolicy": "v2"}, Format: Format{Provider: "parquet", Options: map[string]string{}}}
	txn := &Txn{AppID: "a", Version: 3, LastUpdated: ckptPtr(int64(5))}
	want := append([]Action{{Protocol: protocol}, {Metadata: metadata}, {Txn: txn}}, ckptAsCheckpointed(adds)...)

	jsonTop := `{"checkpointMetadata":{"version":4}}
{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["v2Checkpoint"],"writerFeatures":["v2Checkpoint"]}}
{"metaData":{"id":"id","format":{"provider":"parquet","options":{}},"schemaString":"{}","partitionColumns":[],"configuration":{"delta.checkpointPolicy":"v2"}}}
{"txn":{"appId":"a","version":3,"lastUpdated":5}}
{"sidecar":{"path":"00000000000000000004.checkpoint.0000000001.0000000002.a.parquet","sizeInBytes":1,"modificationTime":1}}
{"sidecar":{"path":"file:///somewhere/_delta_log/_sidecars/side%202.parquet","sizeInBytes":1,"modificationTime":1}}
`
	t.Run("json", func(t *testing.T) {
		s := newCkptTestStore()
		top := "_delta_log/00000000000000000004.checkpoint.3a0d65cd-4056-49b8-937b-95f9e3ee90e5.json"
		s.files[top] = []byte(jsonTop)
		s.files["_delta_log/_sidecars/00000000000000000004.checkpoint.0000000001.0000000002.a.parquet"] = side1
		s.files["_delta_log/_sidecars/side 2.parquet"] = side2
		got, err := readCheckpoint(t.Context(), s, []string{top})
		require.NoError(t, err)
		require.Equal(t, want, got)
	})
	t.Run("parquet", func(t *testing.T) {
		var buf bytes.Buffer
		w := parquet.NewGenericWriter[ckptV2Row](&buf)
		var rows [4]ckptV2Row
		rows[0].CheckpointMetadata = &struct {
			Version int64 `parquet:"version"`
		}{Version: 4}
		rows[1].Protocol = &struct {
			MinReaderVersion int32    `parquet:"minReaderVersion"`
			MinWriterVersion int32    `parquet:"minWriterVersion"`
			ReaderFeatures   []string `parquet:"readerFeatures,list"`
			WriterFeatures   []string `parquet:"writerFeatures,list"`
		}{3, 7, []string{"v2Checkpoint"}, []string{"v2Checkpoint"}}
		rows[2].Metadata = &struct {
			ID               string            `parquet:"id"`
			SchemaString     string            `parquet:"schemaString"`
			PartitionColumns []string          `parquet:"partitionColumns,list"`
			Configuration    map[string]string `parquet:"configuration"`
		}{"id", "{}", nil, map[string]string{"delta.checkpointPolicy": "v2"}}
		rows[3].Sidecar = &struct {
			Path             string `parquet:"path"`
			SizeInBytes      int64  `parquet:"sizeInBytes"`
			ModificationTime int64  `parquet:"modificationTime"`
		}{"s1.parquet", 1, 1}
		_, err := w.Write(rows[:])
		require.NoError(t, err)
		require.NoError(t, w.Close())

		s := newCkptTestStore()
		top := "_delta_log/00000000000000000004.checkpoint.3a0d65cd-4056-49b8-937b-95f9e3ee90e5.parquet"
		s.files[top] = buf.Bytes()
		s.files["_delta_log/_sidecars/s1.parquet"] = side1
		got, err := readCheckpoint(t.Context(), s, []string{top})
		require.NoError(t, err)
		// This file has no format column: the provider reads as empty.
		md := *metadata
		md.Format.Provider = ""
		require.Equal(t, append([]Action{{Protocol: protocol}, {Metadata: &md}}, ckptAsCheckpointed(adds[:6])...), got)
	})
}

func TestReadCheckpointCorrupt(t *testing.T) {
	good, _, err := encodeCheckpoint(1, ckptSampleState(50))
	require.NoError(t, err)
	noActions := ckptParquetOf(t, []struct {
		X int64 `parquet:"x"`
	}{{1}})
	badType := ckptParquetOf(t, []struct {
		Add *struct {
			Path string `parquet:"path"`
			Size string `parquet:"size"`
		} `parquet:"add,optional"`
	}{{}})
	noPath := ckptParquetOf(t, []struct {
		Add *struct {
			Path *string `parquet:"path,optional"`
			Size int64   `parquet:"size"`
		} `parquet:"add,optional"`
	}{{Add: &struct {
		Path *string `parquet:"path,optional"`
		Size int64   `parquet:"size"`
	}{Size: 3}}})
	const cp = "_delta_log/00000000000000000001.checkpoint.parquet"

	tests := []struct {
		name     string
		files    map[string][]byte
		paths    []string
		wantPath string
		wantIs   error
		wantMsg  string
	}{
		{name: "missing", paths: []string{cp}, wantPath: cp, wantIs: ErrNotExist},
		{name: "empty", files: map[string][]byte{cp: {}}, paths: []string{cp}, wantPath: cp},
		{name: "truncated", files: map[string][]byte{cp: good[:len(good)/2]}, paths: []string{cp}, wantPath: cp},
		{name: "footer only kept", files: map[string][]byte{cp: append([]byte("PAR1"), good[len(good)-200:]...)}, paths: []string{cp}, wantPath: cp},
		{name: "garbage", files: map[string][]byte{cp: []byte("PAR1 this is not parquet at all PAR1")}, paths: []string{cp}, wantPath: cp},
		{name: "no action columns", files: map[string][]byte{cp: noActions}, paths: []string{cp}, wantPath: cp, wantIs: errNoActionColumns},
		{name: "foreign column type", files: map[string][]byte{cp: badType}, paths: []string{cp}, wantPath: cp, wantMsg: "unexpected type"},
		{name: "add without path", files: map[string][]byte{cp: noPath}, paths: []string{cp}, wantPath: cp, wantMsg: "add without path"},
		{
			name:     "second part missing",
			files:    map[string][]byte{"p1.parquet": good},
			paths:    []string{"p1.parquet", "p2.parquet"},
			wantPath: "p2.parquet",
			wantIs:   ErrNotExist,
		},
		{
			name:     "v2 json bad line",
			files:    map[string][]byte{"v2.json": []byte("{\"protocol\":{\"minReaderVersion\":3}}\n{\"add\":{\"path\"")},
			paths:    []string{"v2.json"},
			wantPath: "v2.json",
			wantMsg:  "line 2",
		},
		{
			name:     "v2 sidecar missing",
			files:    map[string][]byte{"v2.json": []byte(`{"sidecar":{"path":"gone.parquet","sizeInBytes":1,"modificationTime":1}}`)},
			paths:    []string{"v2.json"},
			wantPath: "_delta_log/_sidecars/gone.parquet",
			wantIs:   ErrNotExist,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newCkptTestStore()
			for p, d := range tc.files {
				s.files[p] = d
			}
			_, err := readCheckpoint(t.Context(), s, tc.paths)
			var cfe *CorruptFileError
			require.ErrorAs(t, err, &cfe)
			require.Equal(t, tc.wantPath, cfe.Path)
			if tc.wantIs != nil {
				require.ErrorIs(t, err, tc.wantIs)
			}
			if tc.wantMsg != "" {
				require.ErrorContains(t, err, tc.wantMsg)
			}
		})
	}
}

func TestReadCheckpointCanceled(t *testing.T) {
	good, _, err := encodeCheckpoint(1, ckptSampleState(10))
	require.NoError(t, err)
	s := newCkptTestStore()
	s.files["cp.parquet"] = good
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = readCheckpoint(ctx, s, []string{"cp.parquet"})
	require.ErrorIs(t, err, context.Canceled)
	var cfe *CorruptFileError
	require.False(t, errors.As(err, &cfe), "cancellation is not corruption")
}

// ckptNamePattern matches checkpoint file names: classic, multi-part (part, parts) and
// UUID-named v2 ones.
var ckptNamePattern = regexp.MustCompile(`^(\d{20})\.checkpoint(?:\.(\d{10})\.(\d{10}))?(?:\.[0-9a-fA-F-]{36})?\.(?:parquet|json)$`)

// ckptGroups lists the checkpoints of a _delta_log directory, each as its files in read
// order (the parts of a multi-part checkpoint together).
func ckptGroups(t *testing.T, logDir string) map[string][]string {
	t.Helper()
	entries, err := os.ReadDir(logDir)
	require.NoError(t, err)
	groups := map[string][]string{}
	for _, e := range entries {
		m := ckptNamePattern.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		key := e.Name()
		if m[2] != "" {
			key = m[1] + " parts " + m[3]
		}
		// ReadDir sorts by name, so parts arrive in order.
		groups[key] = append(groups[key], "_delta_log/"+e.Name())
	}
	return groups
}

// TestReadCheckpointGoldenTables reads every checkpoint of the golden tables that the
// COMPAT scripts produce with delta-rs and Spark (classic, multi-part, v2) and, where
// the table still has all its JSON commits, compares it with the state they describe.
func TestReadCheckpointGoldenTables(t *testing.T) {
	logs, err := filepath.Glob(filepath.Join("testdata", "tables", "*", "_delta_log"))
	require.NoError(t, err)
	n := 0
	for _, logDir := range logs {
		root := filepath.Dir(logDir)
		for key, paths := range ckptGroups(t, logDir) {
			n++
			t.Run(filepath.Base(root)+"/"+key, func(t *testing.T) {
				s := loadCkptTestStore(t, root)
				got, err := readCheckpoint(t.Context(), s, paths)
				require.NoError(t, err)
				st := ckptStateOf(got)
				require.NotNil(t, st.protocol)
				require.NotNil(t, st.metadata)
				for _, a := range st.adds {
					require.NotEmpty(t, a.Path)
					require.NotNil(t, a.PartitionValues)
				}
				v, err := strconv.ParseInt(key[:20], 10, 64)
				require.NoError(t, err)
				if _, ok := s.files[fmt.Sprintf("_delta_log/%020d.json", 0)]; !ok {
					return // log cleaned up: no commits to compare with
				}
				ckptRequireSameState(t, ckptStateOf(ckptCommits(t, s, v)), st)
			})
		}
	}
	if n == 0 {
		t.Skip("no golden tables with checkpoints yet")
	}
}

func ckptParquetOf[T any](t *testing.T, rows []T) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[T](&buf)
	_, err := w.Write(rows)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func ckptOpenForTest(t *testing.T, data []byte) (*parquet.File, *checkpointDecoder) {
	t.Helper()
	f, dec, err := openParquetCheckpoint(data)
	require.NoError(t, err)
	return f, dec
}

func ckptDecodeAll(t *testing.T, f *parquet.File, dec *checkpointDecoder) []Action {
	t.Helper()
	acts, err := dec.decodeFile(t.Context(), f)
	require.NoError(t, err)
	return acts
}
