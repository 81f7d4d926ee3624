package merge

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// dataReadStore counts the data files read, to show what an open read.
type dataReadStore struct {
	deltalog.Store
	mu   sync.Mutex
	read map[string]bool
}

func (s *dataReadStore) Get(ctx context.Context, path string) (io.ReadCloser, error) {
	if strings.HasSuffix(path, ".parquet") {
		s.mu.Lock()
		s.read[path] = true
		s.mu.Unlock()
	}
	return s.Store.Get(ctx, path)
}

// reads returns how many data files were read since the last call.
func (s *dataReadStore) reads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.read)
	s.read = map[string]bool{}
	return n
}

// logBuffer collects a Sink's log lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// diskIndexTable is a table whose key index is on disk, flushed every 100
// changed keys, with the records of a workload to apply to it.
type diskIndexTable struct {
	t       *testing.T
	store   *dataReadStore
	dir     string
	logs    *logBuffer
	batches []Batch
	recs    []Record
	next    int
}

func newDiskIndexTable(t *testing.T) *diskIndexTable {
	recs, _, _ := workloadRecords(t, dbzgen.WorkloadOptions{
		Seed: 11, Keys: 400, Snapshot: true, DeleteRatio: 0.1, MaxTxEvents: 4, Redeliver: 0.1, RedeliverWindow: 200,
	}, 3000)
	d := &diskIndexTable{t: t, store: &dataReadStore{Store: newMemStore(), read: map[string]bool{}}, dir: t.TempDir(), logs: &logBuffer{}, recs: recs}
	for i := 0; i < len(recs); i += 100 {
		b := Batch{LastOffsets: map[cdctable.TopicPartition]int64{}}
		for _, r := range recs[i:min(i+100, len(recs))] {
			b.LastOffsets[r.TopicPartition] = r.Offset
			if r.Change.Op != codecs.OpTombstone {
				b.Records = append(b.Records, r)
			}
		}
		d.batches = append(d.batches, b)
	}
	return d
}

func (d *diskIndexTable) open() *Sink {
	d.t.Helper()
	s, err := Open(d.t.Context(), Options{Store: d.store, TableName: "orders", TargetFileSize: 4 << 10, TailFileSize: -1,
		IndexDir: d.dir, IndexMemoryKeys: 100, Logger: slog.New(slog.NewTextHandler(d.logs, nil))})
	require.NoError(d.t, err)
	return s
}

// apply applies the next n batches.
func (d *diskIndexTable) apply(s *Sink, n int) {
	d.t.Helper()
	for range n {
		_, err := s.Apply(d.t.Context(), d.batches[d.next])
		require.NoError(d.t, err, "batch %d", d.next)
		d.next++
	}
}

// check compares the table with the records applied, and the index with
// one built from the data files.
func (d *diskIndexTable) check(s *Sink) {
	d.t.Helper()
	var applied []Record
	for _, b := range d.batches[:d.next] {
		applied = append(applied, b.Records...)
	}
	ncols := len(d.recs[0].Change.Layout.Columns)
	require.Equal(d.t, expectedRows(d.t, applied), tableRows(d.t, d.store, ncols, "order_id"))
	requireIndexMatchesFiles(d.t, s)
}

// requireIndexMatchesFiles checks every key of the sink's index against an
// index built in memory from the data files: same keys, same rows.
func requireIndexMatchesFiles(t *testing.T, s *Sink) {
	t.Helper()
	st := s.state
	require.NotNil(t, st)
	want, err := buildKeyIndex(t.Context(), s.opts.Store, st, nil, s.log)
	require.NoError(t, err)
	type row struct {
		path string
		row  uint32
		pos  codecs.Position
	}
	wantRows := map[string]row{}
	var keys []string
	for k, loc := range want.keys.all() {
		wantRows[k] = row{want.files[loc.file], loc.row, loc.pos}
		keys = append(keys, k)
	}
	check := liveCheckOf(t.Context(), st.index, s.opts.Store, st.snap)
	locs, found, err := st.index.lookup(keys, check)
	require.NoError(t, err)
	for i, k := range keys {
		require.True(t, found[i], "key %q is missing from the index", k)
		require.Equal(t, wantRows[k], row{st.index.files[locs[i].file], locs[i].row, locs[i].pos}, "key %q", k)
	}
	n := 0
	require.NoError(t, st.index.allLive(check, func(k string, _ rowLoc) error {
		n++
		_, ok := wantRows[k]
		require.True(t, ok, "the index holds %q, which no live row has", k)
		return nil
	}))
	require.Equal(t, len(wantRows), n)
}

func (d *diskIndexTable) files(pattern string) []string {
	d.t.Helper()
	m, err := filepath.Glob(filepath.Join(d.dir, pattern))
	require.NoError(d.t, err)
	return m
}

func TestIndexOnDiskReopens(t *testing.T) {
	d := newDiskIndexTable(t)
	s := d.open()
	d.apply(s, 10)
	require.NotEmpty(t, d.files("*.run"), "1,000 changes over 400 keys flush runs")
	d.check(s)

	// A clean stop saves the index at its version: opening reads no data file.
	require.NoError(t, s.Close())
	d.store.reads()
	s = d.open()
	require.Zero(t, d.store.reads(), "data files read by an open after a clean stop")
	require.Contains(t, d.logs.String(), "key index opened")
	d.apply(s, 5)
	d.check(s)

	// A kill leaves the manifest of the last flush: the open reads only the
	// files added since. Without the manifest it reads all of them.
	files := s.Snapshot().NumFiles()
	d.store.reads()
	s = d.open()
	read := d.store.reads()
	require.Less(t, read, files/2, "data files read by an open after a kill")
	t.Logf("an open after a kill read %d of %d data files", read, files)
	d.apply(s, 5)
	d.check(s)

	// Another open of the directory (a new process) takes over the runs.
	require.NoError(t, s.Close())
	s = d.open()
	d.apply(s, len(d.batches)-d.next)
	d.check(s)
	require.NotContains(t, d.logs.String(), "rebuilding")
}

func TestIndexOnDiskRebuildsWhatItCannotTrust(t *testing.T) {
	tests := []struct {
		name  string
		spoil func(t *testing.T, d *diskIndexTable)
		// rebuilt: the open (or the first batch) builds from the data files.
		rebuilt bool
	}{
		{"a corrupt block", func(t *testing.T, d *diskIndexTable) {
			runs := d.files("*.run")
			for _, p := range runs {
				b, err := os.ReadFile(p)
				require.NoError(t, err)
				b[10] ^= 0xff // in the first block
				require.NoError(t, os.WriteFile(p, b, 0o644))
			}
		}, true},
		{"a missing run", func(t *testing.T, d *diskIndexTable) {
			require.NoError(t, os.Remove(d.files("*.run")[0]))
		}, true},
		{"a manifest cut short", func(t *testing.T, d *diskIndexTable) {
			for _, p := range d.files("manifest-*") {
				require.NoError(t, os.Truncate(p, 20))
			}
		}, true},
		{"a manifest ahead of the log", func(t *testing.T, d *diskIndexTable) {
			// Were it used, this manifest (every live file indexed, no
			// runs) would hide every key and turn updates into inserts.
			m := readNewestManifest(t, d)
			m.Version += 100
			m.Runs = nil
			js, err := json.Marshal(m)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(d.dir, manifestName(m.Version, "ahead")), js, 0o644))
		}, false},
		{"a run no manifest names (a kill during a flush)", func(t *testing.T, d *diskIndexTable) {
			require.NoError(t, os.WriteFile(filepath.Join(d.dir, "0badc0ffee00-000999.run"), []byte("half a run"), 0o644))
		}, false},
		{"a manifest left half-written", func(t *testing.T, d *diskIndexTable) {
			m := readNewestManifest(t, d)
			name := "." + manifestName(m.Version+1, "0badc0ffee00") + ".tmp"
			require.NoError(t, os.WriteFile(filepath.Join(d.dir, name), []byte(`{"format":1,"vers`), 0o644))
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDiskIndexTable(t)
			s := d.open()
			d.apply(s, 12)
			require.NoError(t, s.Close())
			tt.spoil(t, d)

			s = d.open()
			d.apply(s, 8)
			d.check(s)
			if tt.rebuilt {
				require.Contains(t, d.logs.String(), "rebuilding")
			} else {
				require.NotContains(t, d.logs.String(), "rebuilding")
			}
		})
	}
}

func readNewestManifest(t *testing.T, d *diskIndexTable) indexManifest {
	t.Helper()
	_, m, err := newestManifest(d.dir, 1<<62)
	require.NoError(t, err)
	return m
}

// A RESTORE brings back rows a manifest's runs no longer hold: the index is
// rebuilt, and matches the restored table.
func TestIndexOnDiskAfterRestore(t *testing.T) {
	d := newDiskIndexTable(t)
	s := d.open()
	d.apply(s, 6)
	back := s.Version()
	d.apply(s, 10)
	require.NoError(t, s.Close())

	tbl, err := deltalog.Open(t.Context(), d.store)
	require.NoError(t, err)
	cur, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	target, err := tbl.SnapshotAt(t.Context(), back)
	require.NoError(t, err)
	_, err = tableops.Restore(t.Context(), tbl, cur, target, tableops.RestoreOptions{})
	require.NoError(t, err)

	s = d.open()
	requireIndexMatchesFiles(t, s)
	require.Contains(t, d.logs.String(), "rebuilding")
}

// The files of a manifest replaced are deleted: this writer's at once,
// another's only once an hour old, as that writer may still use them.
func TestIndexOnDiskCollectsFiles(t *testing.T) {
	d := newDiskIndexTable(t)
	s := d.open()
	d.apply(s, 6)
	require.NoError(t, s.Close())
	old := time.Now().Add(-2 * time.Hour)
	for _, p := range d.files("*") {
		require.NoError(t, os.Chtimes(p, old, old))
	}
	write := func(name string, at time.Time) string {
		p := filepath.Join(d.dir, name)
		require.NoError(t, os.WriteFile(p, []byte("x"), 0o644))
		require.NoError(t, os.Chtimes(p, at, at))
		return p
	}
	youngRun := write("0000000young-000001.run", time.Now())
	youngManifest := write(manifestName(2, "0000000young"), time.Now())
	oldRun := write("00000000old-000001.run", old)
	oldTmp := write("."+manifestName(2, "00000000old")+".tmp", old)

	s = d.open()
	d.apply(s, 6)
	require.NoError(t, s.Close())
	require.FileExists(t, youngRun)
	require.FileExists(t, youngManifest)
	require.NoFileExists(t, oldRun)
	require.NoFileExists(t, oldTmp)
	// Left beside the young writer's: the last manifest and the runs it names.
	m := readNewestManifest(t, d)
	require.ElementsMatch(t, []string{youngManifest, filepath.Join(d.dir, manifestName(m.Version, s.indexDir.writer))}, d.files("manifest-*"))
	var runs []string
	for _, p := range d.files("*.run") {
		if p != youngRun {
			runs = append(runs, filepath.Base(p))
		}
	}
	require.ElementsMatch(t, m.Runs, runs)
}

// TestIndexOnDiskSavesALongCatchUp: an open whose catch-up over another
// writer's commits writes runs saves the index then, so that an open after
// a kill does not read those files again. The control, a second open of a
// directory whose catch-up wrote no run, shows the count would see it.
func TestIndexOnDiskSavesALongCatchUp(t *testing.T) {
	d := newDiskIndexTable(t)
	s := d.open()
	d.apply(s, 2)
	require.NoError(t, s.Close())

	// Another writer, with its own index directory, commits 20 batches.
	other := *d
	other.dir = t.TempDir()
	o := other.open()
	other.apply(o, 20)
	require.NoError(t, o.Close())
	d.next = other.next

	d.store.reads()
	s = d.open()
	caughtUp := d.store.reads()
	require.Positive(t, caughtUp, "the first open reads the other writer's files")
	d.check(s)

	// Killed (no Close): the next open starts from the saved catch-up.
	d.store.reads()
	s = d.open()
	again := d.store.reads()
	require.Less(t, again, caughtUp/4, "data files read again by an open after a kill")
	t.Logf("the catch-up read %d data files; the open after a kill %d", caughtUp, again)
	d.check(s)
}
