package merge

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
)

// TestPutNewerFlushesWithinAFile: an on-disk index reading a file of many
// more keys than its in-memory table holds (a bulk-loaded file caught up,
// a compacted one read again) flushes as it goes, so the table never holds
// more than memKeys keys, and every key is then found at its row.
func TestPutNewerFlushesWithinAFile(t *testing.T) {
	for _, tc := range []struct {
		name          string
		memKeys, keys int
		minFlushes    int
	}{
		{"ten times the table", 100, 1000, 10},
		{"just over", 100, 101, 1},
		{"fits", 100, 60, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := newKeyIndex(&indexRuns{indexDir: &indexDir{path: t.TempDir(), writer: "t", memKeys: tc.memKeys}})
			defer x.close()
			files := map[string]*deltalog.Add{}
			check := newLiveCheck(t.Context(), x, files, nil)
			for f, path := range []string{"old.parquet", "new.parquet"} {
				files[path] = &deltalog.Add{Path: path}
				entries := make([]keyEntry, tc.keys)
				for i := range entries {
					p, err := codecs.PositionFromHex(fmt.Sprintf("%0*x", codecs.PositionHexLen, 1+f*tc.keys+i))
					require.NoError(t, err)
					entries[i] = keyEntry{key: fmt.Sprintf("k%06d", i), row: i, pos: p}
				}
				seq := x.runs.seq
				require.NoError(t, x.putNewer(path, entries, check))
				require.LessOrEqual(t, x.keys.len(), tc.memKeys)
				// Each flush writes a run of at most memKeys keys (and a
				// merge may write one more): fewer runs than this means a
				// flush held more.
				require.GreaterOrEqual(t, x.runs.seq-seq, tc.minFlushes, "runs written for %d keys", tc.keys)
			}
			keys := make([]string, tc.keys)
			for i := range keys {
				keys[i] = fmt.Sprintf("k%06d", i)
			}
			locs, found, err := x.lookup(keys, check)
			require.NoError(t, err)
			for i := range keys {
				require.True(t, found[i], keys[i])
				require.Equal(t, "new.parquet", x.files[locs[i].file], keys[i])
				require.Equal(t, uint32(i), locs[i].row, keys[i])
			}
		})
	}
}

// TestIndexOnDiskSavesAMoveOfRunRows: a batch folds a file whose keys are
// in runs, more than the in-memory table holds, into a new file, and the
// index redirects their run entries. The index is saved at that version,
// so an open after a kill does not read the file.
func TestIndexOnDiskSavesAMoveOfRunRows(t *testing.T) {
	store := &dataReadStore{Store: newMemStore(), read: map[string]bool{}}
	dir := t.TempDir()
	open := func() *Sink {
		s, err := Open(t.Context(), Options{Store: store, TableName: "items", IndexDir: dir, IndexMemoryKeys: 100})
		require.NoError(t, err)
		return s
	}
	s := open()
	var evs []ev
	const n = absorbMaxRows + 1 // a file of its own
	for i := range n {
		evs = append(evs, ev{op: codecs.OpCreate, id: int32(i), pos: i + 1, name: "x", offset: int64(i)})
	}
	_, err := s.Apply(t.Context(), batchOf(evs...))
	require.NoError(t, err)
	// One update folds that file (below the tail size and tailMaxRows) into
	// a new one: its n keys' run entries are redirected.
	_, err = s.Apply(t.Context(), batchOf(ev{op: codecs.OpUpdate, id: 7, pos: n + 1, name: "y", offset: n}))
	require.NoError(t, err)
	require.Equal(t, 1, s.Snapshot().NumFiles(), "the update was folded")
	require.NotEmpty(t, s.state.index.redirects, "the fold's run entries are redirected")
	requireIndexMatchesFiles(t, s)

	store.reads()
	s = open() // no Close: killed
	require.Zero(t, store.reads(), "data files read by the open after a kill")
	requireIndexMatchesFiles(t, s)
}

// TestIndexOnDiskSavesACatchUpThatWroteRuns: another writer commits a
// file of more keys than the in-memory table holds (as a compaction does);
// the Sink's catch-up reads them into runs and saves the index, so an open
// after a kill does not read the file again.
func TestIndexOnDiskSavesACatchUpThatWroteRuns(t *testing.T) {
	store := &dataReadStore{Store: newMemStore(), read: map[string]bool{}}
	openIn := func(dir string) *Sink {
		s, err := Open(t.Context(), Options{Store: store, TableName: "items", IndexDir: dir, IndexMemoryKeys: 100})
		require.NoError(t, err)
		return s
	}
	dir := t.TempDir()
	s := openIn(dir)
	_, err := s.Apply(t.Context(), batchOf(ev{op: codecs.OpCreate, id: 0, pos: 1, name: "x", offset: 0}))
	require.NoError(t, err)

	other := openIn(t.TempDir())
	before := map[string]bool{}
	for _, f := range other.Snapshot().Files() {
		before[f.Path] = true
	}
	var evs []ev
	for i := 1; i <= absorbMaxRows+1; i++ {
		evs = append(evs, ev{op: codecs.OpCreate, id: int32(i), pos: i + 1, name: "x", offset: int64(i)})
	}
	_, err = other.Apply(t.Context(), batchOf(evs...))
	require.NoError(t, err)
	var big string
	for _, f := range other.Snapshot().Files() {
		if !before[f.Path] {
			big = f.Path
		}
	}
	require.NoError(t, other.Close())

	s.Behind()
	_, err = s.Apply(t.Context(), batchOf(ev{op: codecs.OpCreate, id: 5000, pos: 5000, name: "y", offset: 5000}))
	require.NoError(t, err)

	store.reads()
	s = openIn(dir) // no Close: killed
	store.mu.Lock()
	reread := store.read[big]
	store.mu.Unlock()
	require.False(t, reread, "the other writer's file read again by the open after a kill")
	requireIndexMatchesFiles(t, s)
}
