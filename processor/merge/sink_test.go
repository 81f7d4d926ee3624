package merge

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

const (
	opC = codecs.OpCreate
	opU = codecs.OpUpdate
	opD = codecs.OpDelete
	opR = codecs.OpRead
	opT = codecs.OpTruncate
)

func TestSinkSemantics(t *testing.T) {
	type want struct {
		name  string
		price int64
		notes string
	}
	cases := []struct {
		name    string
		batches [][]ev
		want    map[int32]want
		// last batch's counts
		inserted, updated, deleted, stale, dups, superseded int64
	}{
		{
			name:     "insert",
			batches:  [][]ev{{{op: opC, id: 1, pos: 1, name: "a", price: 100, offset: 0}, {op: opR, id: 2, pos: 1, name: "b", offset: 1}}},
			want:     map[int32]want{1: {"a", 100, ""}, 2: {"b", 0, ""}},
			inserted: 2,
		},
		{
			name: "update and delete across batches",
			batches: [][]ev{
				{{op: opC, id: 1, pos: 1, name: "a", offset: 0}, {op: opC, id: 2, pos: 2, name: "b", offset: 1}, {op: opC, id: 3, pos: 3, name: "c", offset: 2}},
				{{op: opU, id: 1, pos: 4, name: "a2", price: 5, offset: 3}, {op: opD, id: 2, pos: 5, offset: 4}, {op: opC, id: 4, pos: 6, name: "d", offset: 5}},
			},
			want:     map[int32]want{1: {"a2", 5, ""}, 3: {"c", 0, ""}, 4: {"d", 0, ""}},
			inserted: 1, updated: 1, deleted: 1,
		},
		{
			name: "in-batch dedup keeps the latest position, not the latest offset",
			batches: [][]ev{{
				{op: opC, id: 1, pos: 1, name: "v1", offset: 0},
				{op: opU, id: 1, pos: 3, name: "v3", offset: 1},
				{op: opU, id: 1, pos: 2, name: "v2", offset: 2},
				{op: opU, id: 1, pos: 3, name: "v3", offset: 3},
			}},
			want:     map[int32]want{1: {"v3", 0, ""}},
			inserted: 1, dups: 1, superseded: 2,
		},
		{
			name: "stale events across batches are skipped",
			batches: [][]ev{
				{{op: opC, id: 1, pos: 5, name: "new", offset: 0}},
				{{op: opU, id: 1, pos: 4, name: "old", offset: 1}, {op: opU, id: 1, pos: 5, name: "dup", offset: 2, part: 1}},
			},
			want:  map[int32]want{1: {"new", 0, ""}},
			stale: 1, superseded: 1,
		},
		{
			name: "a delete is not resurrected by an older create",
			batches: [][]ev{
				{{op: opC, id: 1, pos: 1, name: "a", offset: 0}},
				{{op: opD, id: 1, pos: 3, offset: 1}},
				{{op: opU, id: 1, pos: 2, name: "late", offset: 2}},
			},
			want:  map[int32]want{},
			stale: 1,
		},
		{
			name: "a delete of an unknown key still guards it",
			batches: [][]ev{
				{{op: opD, id: 7, pos: 3, offset: 0}, {op: opC, id: 8, pos: 1, name: "x", offset: 1}},
				{{op: opC, id: 7, pos: 2, name: "late", offset: 2}},
			},
			want:  map[int32]want{8: {"x", 0, ""}},
			stale: 1,
		},
		{
			name: "unavailable columns keep the stored value",
			batches: [][]ev{
				{{op: opC, id: 1, pos: 1, name: "a", notes: "long text", offset: 0}, {op: opC, id: 2, pos: 2, name: "b", notes: "other", offset: 1}},
				{{op: opU, id: 1, pos: 3, name: "a2", unavailable: true, offset: 2}},
				{{op: opU, id: 1, pos: 4, name: "a3", unavailable: true, offset: 3}},
			},
			want:    map[int32]want{1: {"a3", 0, "long text"}, 2: {"b", 0, "other"}},
			updated: 1,
		},
		{
			name: "truncate removes every row before it",
			batches: [][]ev{
				{{op: opC, id: 1, pos: 1, name: "a", offset: 0}, {op: opC, id: 2, pos: 2, name: "b", offset: 1}},
				{{op: opC, id: 3, pos: 3, name: "c", offset: 2}, {op: opT, pos: 4, offset: 3}, {op: opC, id: 4, pos: 5, name: "d", offset: 4}},
				{{op: opU, id: 2, pos: 3, name: "late", offset: 5}},
			},
			want:  map[int32]want{4: {"d", 0, ""}},
			stale: 1,
		},
		{
			name: "replaying an applied batch is a no-op",
			batches: [][]ev{
				{{op: opC, id: 1, pos: 1, name: "a", offset: 0}, {op: opU, id: 1, pos: 2, name: "b", offset: 1}},
				{{op: opC, id: 1, pos: 1, name: "a", offset: 0}, {op: opU, id: 1, pos: 2, name: "b", offset: 1}},
			},
			want: map[int32]want{1: {"b", 0, ""}},
		},
	}
	for _, mode := range []Mode{ModeDV, ModeCoW} {
		for _, tc := range cases {
			t.Run(string(mode)+"/"+tc.name, func(t *testing.T) {
				store := newMemStore()
				s := newTestSink(t, store, mode, DeleteHard)
				var res Result
				for _, b := range tc.batches {
					var err error
					res, err = s.Apply(t.Context(), batchOf(b...))
					require.NoError(t, err)
				}
				require.Equal(t, tc.inserted, res.Inserted, "inserted")
				require.Equal(t, tc.updated, res.Updated, "updated")
				require.Equal(t, tc.deleted, res.Deleted, "deleted")
				require.Equal(t, tc.stale, res.SkippedStale, "stale")
				require.Equal(t, tc.dups, res.Duplicates, "duplicates")
				require.Equal(t, tc.superseded, res.Superseded, "superseded")
				got := map[int32]want{}
				for id, it := range readItems(t, store) {
					got[id] = want{it.name, it.price, it.notes}
				}
				require.Equal(t, tc.want, got)

				// A fresh sink (index and tombstones rebuilt from storage)
				// agrees, and a replay of every batch changes nothing.
				s2 := newTestSink(t, store, mode, DeleteHard)
				v := s2.Version()
				for _, b := range tc.batches {
					r, err := s2.Apply(t.Context(), batchOf(b...))
					require.NoError(t, err)
					require.False(t, r.Committed)
				}
				require.Equal(t, v, s2.Version())
			})
		}
	}
}

func TestSinkTxnAndPositions(t *testing.T) {
	store := newMemStore()
	s := newTestSink(t, store, ModeAuto, DeleteHard)
	pos0, err := s.Positions(t.Context())
	require.NoError(t, err)
	require.Empty(t, pos0)

	b := batchOf(ev{op: opC, id: 1, pos: 1, offset: 10}, ev{op: opC, id: 2, pos: 2, offset: 4, part: 1})
	tp0 := cdctable.TopicPartition{Topic: "sales.dbo.items", Partition: 0}
	tp2 := cdctable.TopicPartition{Topic: "sales.dbo.items", Partition: 2}
	b.LastOffsets[tp0] = 12 // records 11, 12 were tombstones
	b.LastOffsets[tp2] = 99 // a partition with only skipped records
	res, err := s.Apply(t.Context(), b)
	require.NoError(t, err)
	require.True(t, res.Committed)
	got, err := s.Positions(t.Context())
	require.NoError(t, err)
	require.Equal(t, map[cdctable.TopicPartition]int64{tp0: 12, {Topic: "sales.dbo.items", Partition: 1}: 4, tp2: 99}, got)

	// Only partitions that moved get a txn; a partly replayed batch applies
	// its new records only.
	b2 := batchOf(ev{op: opU, id: 1, pos: 3, name: "x", offset: 12}, ev{op: opU, id: 1, pos: 4, name: "y", offset: 13})
	res, err = s.Apply(t.Context(), b2)
	require.NoError(t, err)
	require.Equal(t, int64(1), res.SkippedReplayed)
	require.Equal(t, int64(1), res.Updated)
	require.Equal(t, "y", readItems(t, store)[1].name)

	tbl, err := deltalog.Open(t.Context(), store)
	require.NoError(t, err)
	snap, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	v, ok := snap.TxnVersion(tp0.AppID())
	require.True(t, ok)
	require.Equal(t, int64(13), v)
	require.Equal(t, "cdc2delta/sales.dbo.items/0", tp0.AppID())
}

func TestSinkSoftDelete(t *testing.T) {
	store := newMemStore()
	s := newTestSink(t, store, ModeAuto, DeleteSoft)
	_, err := s.Apply(t.Context(), batchOf(ev{op: opC, id: 1, pos: 1, name: "a", offset: 0}, ev{op: opC, id: 2, pos: 2, name: "b", offset: 1}))
	require.NoError(t, err)
	res, err := s.Apply(t.Context(), batchOf(ev{op: opD, id: 1, pos: 3, name: "a", offset: 2}))
	require.NoError(t, err)
	require.Equal(t, int64(1), res.Deleted)
	res, err = s.Apply(t.Context(), batchOf(ev{op: opU, id: 1, pos: 2, name: "late", offset: 3}))
	require.NoError(t, err)
	require.Equal(t, int64(1), res.SkippedStale)
	got := readItems(t, store)
	require.Len(t, got, 2)
	require.True(t, got[1].deleted)
	require.Equal(t, "d", got[1].op)
	require.Equal(t, "a", got[1].name)
	require.Equal(t, pos(3).Hex(), got[1].pos)
	require.False(t, got[2].deleted)
}

func TestSinkTombstonesSurviveRestart(t *testing.T) {
	store := newMemStore()
	s := newTestSink(t, store, ModeAuto, DeleteHard)
	_, err := s.Apply(t.Context(), batchOf(ev{op: opC, id: 1, pos: 1, offset: 0}, ev{op: opD, id: 1, pos: 5, offset: 1}))
	require.NoError(t, err)
	s2 := newTestSink(t, store, ModeAuto, DeleteHard)
	res, err := s2.Apply(t.Context(), batchOf(ev{op: opU, id: 1, pos: 4, name: "late", offset: 2}))
	require.NoError(t, err)
	require.Equal(t, int64(1), res.SkippedStale)
	require.Empty(t, readItems(t, store))
}

func TestSinkConcurrentWriters(t *testing.T) {
	for _, mode := range []Mode{ModeDV, ModeCoW} {
		t.Run(string(mode), func(t *testing.T) {
			store := newMemStore()
			a := newTestSink(t, store, mode, DeleteHard)
			_, err := a.Apply(t.Context(), batchOf(ev{op: opC, id: 1, pos: 1, name: "a", offset: 0}, ev{op: opC, id: 2, pos: 2, name: "b", offset: 1}))
			require.NoError(t, err)
			b := newTestSink(t, store, mode, DeleteHard)
			// b updates key 1 from another partition; a's index is now stale.
			_, err = b.Apply(t.Context(), batchOf(ev{op: opU, id: 1, pos: 3, name: "from b", offset: 0, part: 1}))
			require.NoError(t, err)
			res, err := a.Apply(t.Context(), batchOf(ev{op: opU, id: 1, pos: 4, name: "from a", offset: 2}, ev{op: opU, id: 2, pos: 5, name: "b2", offset: 3}))
			require.NoError(t, err)
			require.Equal(t, 1, res.Retries)
			require.Equal(t, int64(2), res.Updated)
			got := readItems(t, store)
			require.Equal(t, "from a", got[1].name)
			require.Equal(t, "b2", got[2].name)
			require.Len(t, got, 2)
		})
	}
}

func TestSinkTableSchema(t *testing.T) {
	for _, tc := range []struct {
		mode    Mode
		wantDV  bool
		readerV int
	}{{ModeAuto, true, 3}, {ModeCoW, false, 3}} { // column mapping is a reader feature, never legacy reader 2 (ADR 0027)
		t.Run(string(tc.mode), func(t *testing.T) {
			store := newMemStore()
			s := newTestSink(t, store, tc.mode, DeleteHard)
			_, err := s.Apply(t.Context(), batchOf(ev{op: opC, id: 1, pos: 1, offset: 0}))
			require.NoError(t, err)
			tbl, err := deltalog.Open(t.Context(), store)
			require.NoError(t, err)
			snap, err := tbl.Snapshot(t.Context())
			require.NoError(t, err)
			meta := snap.Metadata()
			require.Equal(t, "items", meta.Name)
			require.Contains(t, meta.Description, "sales.dbo.items")
			require.Equal(t, `["id"]`, meta.Configuration[cdctable.PropKeyColumns])
			require.Equal(t, "name", meta.Configuration[deltalog.PropColumnMappingMode], "[Unit Price] needs column mapping")
			require.Equal(t, tc.readerV, snap.Protocol().MinReaderVersion)
			require.Equal(t, tc.wantDV, snap.Protocol().HasReaderFeature(deltalog.FeatureDeletionVectors))
			require.Contains(t, snap.Protocol().ReaderFeatures, deltalog.FeatureColumnMapping)
			var names []string
			for _, f := range snap.Schema().Fields {
				names = append(names, f.Name)
				require.NotEmpty(t, f.Metadata["comment"], "column %s has no comment", f.Name)
			}
			require.Equal(t, []string{"id", "name", "Unit Price", "notes", cdctable.ColPosition, cdctable.ColOp, cdctable.ColCommitTime}, names)
			id, _ := snap.Schema().Field("id")
			require.False(t, id.Nullable)
			price, _ := snap.Schema().Field("Unit Price")
			require.Equal(t, "decimal(10,2)", price.Type.String())
		})
	}
}

func TestSinkSchemaEvolution(t *testing.T) {
	store := newMemStore()
	s := newTestSink(t, store, ModeAuto, DeleteHard)
	_, err := s.Apply(t.Context(), batchOf(ev{op: opC, id: 1, pos: 1, name: "a", offset: 0}))
	require.NoError(t, err)

	// A new nullable column: the table grows, old rows read NULL there.
	wide := &codecs.Layout{SchemaID: 3, Name: itemsLayout.Name, Columns: append(append([]codecs.Column(nil), itemsLayout.Columns...),
		codecs.Column{Name: "color", Type: kStr, Nullable: true})}
	r := ev{op: opC, id: 2, pos: 2, name: "b", offset: 1}.record()
	r.Change.Layout = wide
	r.Change.Row = append(r.Change.Row, "red")
	res, err := s.Apply(t.Context(), Batch{Records: []Record{r}})
	require.NoError(t, err)
	require.True(t, res.Committed)
	tbl, err := deltalog.Open(t.Context(), store)
	require.NoError(t, err)
	snap, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	_, ok := snap.Schema().Field("color")
	require.True(t, ok)
	require.Len(t, readItems(t, store), 2)

	// A changed type is refused: the table stops, nothing is committed.
	bad := &codecs.Layout{SchemaID: 4, Name: itemsLayout.Name, Columns: append([]codecs.Column(nil), wide.Columns...)}
	bad.Columns[1] = codecs.Column{Name: "name", Type: kInt, Nullable: true}
	// It comes after a good record of the batch; the error names it.
	good := ev{op: opC, id: 4, pos: 3, name: "c", offset: 2}.record()
	good.Change.Layout = wide
	good.Change.Row = append(good.Change.Row, "blue")
	r = ev{op: opC, id: 3, pos: 4, offset: 3}.record()
	r.Change.Layout = bad
	r.Change.Row = []any{int32(3), int32(7), nil, nil, nil}
	before := snap.Version()
	_, err = s.Apply(t.Context(), Batch{Records: []Record{good, r}, LastOffsets: map[cdctable.TopicPartition]int64{r.TopicPartition: 3}})
	var se *SchemaError
	require.ErrorAs(t, err, &se)
	require.NotNil(t, se.Record, "the error names the record with the new schema")
	require.Equal(t, r.TopicPartition, se.Record.TopicPartition)
	require.Equal(t, int64(3), se.Record.Offset)
	require.True(t, errors.Is(err, ErrSchema))
	require.True(t, errors.Is(err, codecs.ErrSchemaChange))
	require.Equal(t, "items", se.Table)
	require.NotEmpty(t, se.Remedy)
	snap, err = tbl.Snapshot(t.Context())
	require.NoError(t, err)
	require.Equal(t, before, snap.Version())
}

// TestSinkDeletionVectorStats follows one file through three vectors: the
// first makes its statistics say the bounds are no longer tight and keeps
// the rest, later ones leave them as they are, and the batch that deletes
// its last live row removes it instead of giving it a vector.
func TestSinkDeletionVectorStats(t *testing.T) {
	store := newMemStore()
	s, err := Open(t.Context(), Options{Store: store, TableName: "items", Mode: ModeDV, TailFileSize: -1})
	require.NoError(t, err)
	var evs []ev
	for id := range int32(4) {
		evs = append(evs, ev{op: opC, id: id, pos: int(id) + 1, name: "n", offset: int64(id)})
	}
	_, err = s.Apply(t.Context(), batchOf(evs...))
	require.NoError(t, err)
	var path string
	fileOf := func() (deltalog.Add, bool) {
		tbl, err := deltalog.Open(t.Context(), store)
		require.NoError(t, err)
		snap, err := tbl.Snapshot(t.Context())
		require.NoError(t, err)
		for _, f := range snap.Files() {
			if f.Path == path {
				return f, true
			}
		}
		return deltalog.Add{}, false
	}
	tbl, err := deltalog.Open(t.Context(), store)
	require.NoError(t, err)
	snap, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	require.Len(t, snap.Files(), 1)
	first := snap.Files()[0]
	path = first.Path
	want, ok, err := deltalog.ParseStats(first.Stats)
	require.NoError(t, err)
	require.True(t, ok)
	require.True(t, want.TightBounds == nil || *want.TightBounds, "a new file's bounds are tight")
	want.TightBounds = new(bool)

	var loose string
	for i, e := range []ev{
		{op: opU, id: 0, pos: 10, name: "u", offset: 4},
		{op: opU, id: 1, pos: 11, name: "u", offset: 5},
		{op: opD, id: 2, pos: 12, offset: 6},
	} {
		_, err = s.Apply(t.Context(), batchOf(e))
		require.NoError(t, err)
		f, ok := fileOf()
		require.True(t, ok, "batch %d", i)
		require.NotNil(t, f.DeletionVector, "batch %d", i)
		require.Equal(t, int64(i+1), f.DeletionVector.Cardinality)
		got, _, err := deltalog.ParseStats(f.Stats)
		require.NoError(t, err)
		require.Equal(t, want, got, "batch %d: the same statistics, not tight", i)
		if i == 0 {
			loose = f.Stats
		}
		require.Equal(t, loose, f.Stats, "batch %d: statistics already loose are kept as they are", i)
	}
	_, err = s.Apply(t.Context(), batchOf(ev{op: opD, id: 3, pos: 13, offset: 7}))
	require.NoError(t, err)
	_, ok = fileOf()
	require.False(t, ok, "a file with no live row is removed")
	require.Len(t, readItems(t, store), 2)
}
