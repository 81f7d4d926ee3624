package merge

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

func openShip(t *testing.T, store deltalog.Store, mode Mode, partitionBy ...string) *Sink {
	t.Helper()
	s, err := Open(t.Context(), Options{Store: store, TableName: "ship", Mode: mode, PartitionBy: partitionBy})
	require.NoError(t, err)
	return s
}

func TestPartitionedMerge(t *testing.T) {
	batches := [][]shipEv{
		{ // inserts into awkward partitions, null and empty ones included
			{op: opC, id: 1, pos: 1, region: "eu", day: 19000, qty: 1},
			{op: opC, id: 2, pos: 2, region: "us", day: 19000, qty: 2},
			{op: opC, id: 3, pos: 3, region: "a/b=c", day: -1, qty: 3},
			{op: opC, id: 4, pos: 4, region: "50% off", day: 19001, qty: 4},
			{op: opC, id: 5, pos: 5, region: "ümlaut ü", day: 19001, qty: 5},
			{op: opC, id: 6, pos: 6, region: "", day: 19000, qty: 6},
			{op: opC, id: 7, pos: 7, region: nil, day: 19000, qty: 7},
			{op: opC, id: 8, pos: 8, region: "sp ace?#", day: 19000, qty: 8},
			{op: opC, id: 10, pos: 9, region: "eu", day: 19000, qty: 10},
		},
		{ // updates in place and across partitions, a delete, an insert
			{op: opU, id: 1, pos: 10, region: "eu", day: 19000, qty: 11},
			{op: opU, id: 2, pos: 11, region: "eu", day: 19000, qty: 12},
			{op: opU, id: 3, pos: 12, region: "a/b=c", day: 19002, qty: 13},
			{op: opD, id: 4, pos: 13, region: "50% off", day: 19001, qty: 4},
			{op: opC, id: 9, pos: 14, region: "eu", day: 19000, qty: 9},
			{op: opU, id: 5, pos: 15, region: "us", day: 19001, qty: 15},
			{op: opU, id: 5, pos: 16, region: "ümlaut ü", day: 19001, qty: 16},
		},
		{ // after a restart: the index comes back from the partitioned files
			{op: opU, id: 2, pos: 17, region: nil, day: 19000, qty: 22},
			{op: opD, id: 6, pos: 18, region: "", day: 19000, qty: 6},
			{op: opU, id: 7, pos: 19, region: "us", day: -1, qty: 27},
			{op: opU, id: 10, pos: 20, region: "", day: 19000, qty: 30},
		},
		{ // a truncate, then rows after it
			{op: opU, id: 1, pos: 21, region: "us", day: 19000, qty: 41},
			{op: codecs.OpTruncate, pos: 22},
			{op: opC, id: 20, pos: 23, region: "eu", day: 19003, qty: 20},
			{op: opC, id: 21, pos: 24, region: nil, day: -1, qty: 21},
		},
		{ // every file of the new table touched: moves and deletes
			{op: opU, id: 20, pos: 25, region: "us", day: 19003, qty: 50},
			{op: opD, id: 21, pos: 26, region: nil, day: -1, qty: 21},
			{op: opC, id: 22, pos: 27, region: "eu", day: 19003, qty: 22},
		},
	}
	for _, mode := range []Mode{ModeDV, ModeCoW} {
		t.Run(string(mode), func(t *testing.T) {
			store := newMemStore()
			s := openShip(t, store, mode, "region", "day")
			model := shipModel{}
			off := int64(0)
			for i, evs := range batches {
				for j := range evs {
					evs[j].offset = off
					off++
				}
				if i == 2 {
					s = openShip(t, store, mode, "region", "day")
				}
				res, err := s.Apply(t.Context(), shipBatch(evs...))
				require.NoError(t, err, "batch %d", i)
				require.True(t, res.Committed)
				if mode == ModeDV && i == 1 {
					require.Positive(t, res.DeletionVectors, "old row versions leave through deletion vectors")
				}
				model.apply(evs...)
				require.Equal(t, model.rows(), readShip(t, store), "after batch %d", i)
			}
			snap := latestSnapshot(t, store)
			require.Equal(t, []string{"region", "day"}, snap.Metadata().PartitionColumns)
			region, _ := snap.Schema().Field("region")
			require.True(t, region.Nullable, "a string partition column is nullable: an empty value reads as null")
		})
	}
}

func latestSnapshot(t *testing.T, store deltalog.Store) *deltalog.Snapshot {
	t.Helper()
	tbl, err := deltalog.Open(t.Context(), store)
	require.NoError(t, err)
	snap, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	return snap
}

// A string key column that partitions the table: an empty key value is
// stored as a null partition value, and the index rebuilt after a restart
// must still find that row.
func TestPartitionedByKeyColumn(t *testing.T) {
	keyLayout := &codecs.Layout{SchemaID: 13, Name: "sales.dbo.ship.Key", Columns: []codecs.Column{{Name: "region", Type: kStr}, {Name: "id", Type: kInt}}}
	rec := func(e shipEv) Record {
		r := e.record()
		r.Change.KeyLayout, r.Change.KeyIndex, r.Change.Key = keyLayout, []int{1, 0}, []any{e.region, e.id}
		return r
	}
	batch := func(evs ...shipEv) Batch {
		b := Batch{LastOffsets: map[cdctable.TopicPartition]int64{}}
		for _, e := range evs {
			r := rec(e)
			b.Records = append(b.Records, r)
			b.LastOffsets[r.TopicPartition] = max(b.LastOffsets[r.TopicPartition], r.Offset)
		}
		return b
	}
	for _, mode := range []Mode{ModeDV, ModeCoW} {
		t.Run(string(mode), func(t *testing.T) {
			store := newMemStore()
			s := openShip(t, store, mode, "region")
			first := []shipEv{
				{op: opC, id: 1, pos: 1, region: "", day: 1, qty: 1, offset: 0},
				{op: opC, id: 1, pos: 2, region: "eu", day: 1, qty: 2, offset: 1},
			}
			_, err := s.Apply(t.Context(), batch(first...))
			require.NoError(t, err)
			second := []shipEv{{op: opU, id: 1, pos: 3, region: "", day: 1, qty: 3, offset: 2}}
			_, err = s.Apply(t.Context(), batch(second...))
			require.NoError(t, err)
			s = openShip(t, store, mode, "region")
			third := []shipEv{
				{op: opU, id: 1, pos: 4, region: "", day: 1, qty: 4, offset: 3},
				{op: opD, id: 1, pos: 5, region: "eu", day: 1, qty: 2, offset: 4},
			}
			res, err := s.Apply(t.Context(), batch(third...))
			require.NoError(t, err)
			require.EqualValues(t, 1, res.Updated)
			require.EqualValues(t, 1, res.Deleted)
			require.Equal(t, []string{"1|<nil>|1|4"}, readShip(t, store))
		})
	}
}

func TestPartitionByRefused(t *testing.T) {
	accepted := []string{"id", "region", "day", "qty"}
	for _, tc := range []struct {
		name   string
		by     []string
		column string
	}{
		{"unknown column", []string{"nope"}, "nope"},
		{"binary", []string{"blob"}, "blob"},
		{"double", []string{"region", "ratio"}, "ratio"},
		{"metadata column", []string{cdctable.ColOp}, cdctable.ColOp},
		{"twice", []string{"region", "REGION"}, "REGION"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := newMemStore()
			s := openShip(t, store, ModeAuto, tc.by...)
			_, err := s.Apply(t.Context(), shipBatch(shipEv{op: opC, id: 1, pos: 1, region: "eu", qty: 1}))
			var pe *PartitionError
			require.ErrorAs(t, err, &pe)
			require.Equal(t, tc.column, pe.Column)
			require.Equal(t, accepted, pe.Accepted)
			require.ErrorIs(t, err, ErrPartition)
			require.ErrorIs(t, err, ErrSchema)
			require.Contains(t, err.Error(), fmt.Sprintf("%q", tc.column))
			require.Contains(t, err.Error(), "id, region, day, qty")
			tbl, err := deltalog.Open(t.Context(), store)
			require.NoError(t, err)
			_, err = tbl.Snapshot(t.Context())
			require.ErrorIs(t, err, deltalog.ErrNotExist, "no table is created")
		})
	}
}

func TestPartitionByMatchesCaseInsensitively(t *testing.T) {
	store := newMemStore()
	s := openShip(t, store, ModeAuto, "Region")
	_, err := s.Apply(t.Context(), shipBatch(shipEv{op: opC, id: 1, pos: 1, region: "eu", day: 3, qty: 1}))
	require.NoError(t, err)
	require.Equal(t, []string{"region"}, latestSnapshot(t, store).Metadata().PartitionColumns)
	require.Equal(t, []string{"1|eu|3|1"}, readShip(t, store))
}

// An existing table keeps its partitioning, like its change data feed.
func TestPartitionByIgnoredForExistingTable(t *testing.T) {
	store := newMemStore()
	s := openShip(t, store, ModeAuto)
	_, err := s.Apply(t.Context(), shipBatch(shipEv{op: opC, id: 1, pos: 1, region: "eu", day: 3, qty: 1}))
	require.NoError(t, err)
	s = openShip(t, store, ModeAuto, "region")
	_, err = s.Apply(t.Context(), shipBatch(shipEv{op: opU, id: 1, pos: 2, region: "us", day: 3, qty: 2, offset: 1}))
	require.NoError(t, err)
	require.Empty(t, latestSnapshot(t, store).Metadata().PartitionColumns)
	require.Equal(t, []string{"1|us|3|2"}, readShip(t, store))
}

// Change data files carry the partition values of their rows: an update
// that moves a row has its preimage in the old partition, its postimage in
// the new one.
func TestPartitionedChangeData(t *testing.T) {
	store := newMemStore()
	s, err := Open(t.Context(), Options{Store: store, TableName: "ship", PartitionBy: []string{"region"}, EnableChangeDataFeed: true})
	require.NoError(t, err)
	_, err = s.Apply(t.Context(), shipBatch(
		shipEv{op: opC, id: 1, pos: 1, region: "eu", qty: 1, offset: 0},
		shipEv{op: opC, id: 2, pos: 2, region: "us", qty: 2, offset: 1},
	))
	require.NoError(t, err)
	res, err := s.Apply(t.Context(), shipBatch(
		shipEv{op: opU, id: 1, pos: 3, region: "us", qty: 3, offset: 2},
		shipEv{op: opD, id: 2, pos: 4, region: "us", qty: 2, offset: 3},
	))
	require.NoError(t, err)
	snap := latestSnapshot(t, store)
	cdfSchema := &deltalog.StructType{Fields: append(slices.Clone(snap.Schema().Fields),
		deltalog.StructField{Name: ColChangeType, Type: deltalog.TypeString, Nullable: true})}
	ri := slices.IndexFunc(cdfSchema.Fields, func(f deltalog.StructField) bool { return f.Name == "region" })
	var got []string
	cdcs := 0
	for _, a := range commitActions(t, store, res.Version) {
		if a.CDC == nil {
			continue
		}
		cdcs++
		require.Contains(t, a.CDC.PartitionValues, "region")
		rows, err := datafile.Read(t.Context(), store, &deltalog.Add{Path: a.CDC.Path, PartitionValues: a.CDC.PartitionValues, Size: a.CDC.Size},
			cdfSchema, datafile.ReadOptions{Properties: snap.Metadata().Configuration, PartitionColumns: []string{"region"}})
		require.NoError(t, err)
		for _, r := range rows {
			require.Equal(t, r[ri], *a.CDC.PartitionValues["region"], "a change data file holds one partition")
			got = append(got, fmt.Sprintf("%s %v %v", r[len(r)-1], r[0], r[ri]))
		}
	}
	require.Equal(t, 2, cdcs, "one change data file per partition")
	require.ElementsMatch(t, []string{"update_preimage 1 eu", "update_postimage 1 us", "delete 2 us"}, got)
}

func TestPartitionErrorUnwraps(t *testing.T) {
	err := fmt.Errorf("applying: %w", &PartitionError{Table: "t", Column: "c", Reason: "is not a column of the source table"})
	require.True(t, errors.Is(err, ErrPartition))
	require.Contains(t, err.Error(), "columns it accepts: none")
}

// A generated workload merged into a table partitioned by two columns its
// updates change, with restarts, against the model.
func TestPartitionedSinkModel(t *testing.T) {
	for _, tc := range []struct {
		name string
		mode Mode
		seed uint64
	}{{"dv", ModeDV, 4}, {"cow", ModeCoW, 5}} {
		t.Run(tc.name, func(t *testing.T) {
			recs, _, _ := workloadRecords(t, dbzgen.WorkloadOptions{
				Seed: tc.seed, Keys: 50, Snapshot: true, DeleteRatio: 0.15, KeyChangeRatio: 0.05,
				MaxTxEvents: 4, Redeliver: 0.2, RedeliverWindow: 300,
			}, 800)
			opts := Options{Store: newMemStore(), TableName: "orders", Mode: tc.mode,
				TargetFileSize: 4 << 10, PartitionBy: []string{"status", "flag"}}
			s, err := Open(t.Context(), opts)
			require.NoError(t, err)
			rng := rand.New(rand.NewPCG(tc.seed, 7))
			for i := 0; i < len(recs); {
				n := 1 + rng.IntN(60)
				b := Batch{LastOffsets: map[cdctable.TopicPartition]int64{}}
				for _, r := range recs[i:min(i+n, len(recs))] {
					b.LastOffsets[r.TopicPartition] = r.Offset
					if r.Change.Op != codecs.OpTombstone {
						b.Records = append(b.Records, r)
					}
				}
				i += n
				_, err := s.Apply(t.Context(), b)
				require.NoError(t, err)
				if rng.IntN(8) == 0 {
					s, err = Open(t.Context(), opts)
					require.NoError(t, err)
				}
			}
			snap := latestSnapshot(t, opts.Store)
			meta := snap.Metadata()
			require.Equal(t, []string{"status", "flag"}, meta.PartitionColumns)
			partitions := map[string]bool{}
			for _, add := range snap.Files() {
				require.Len(t, add.PartitionValues, 2)
				pv, _ := json.Marshal(add.PartitionValues)
				partitions[string(pv)] = true
				rows, err := datafile.Read(t.Context(), opts.Store, &add, snap.Schema(), datafile.ReadOptions{Properties: meta.Configuration})
				require.NoError(t, err)
				for _, r := range rows {
					for i, f := range snap.Schema().Fields {
						if slices.Contains(meta.PartitionColumns, f.Name) {
							want, err := datafile.PartitionValue(f.Type, r[i])
							require.NoError(t, err)
							require.Equal(t, want, add.PartitionValues[deltalog.PhysicalName(f)])
						}
					}
				}
			}
			require.Greater(t, len(partitions), 3, "the workload spreads over several partitions")
			ncols := len(recs[0].Change.Layout.Columns)
			require.Equal(t, expectedRows(t, recs), tableRows(t, opts.Store, ncols, "order_id"))
		})
	}
}

// Under column mapping metaData.partitionColumns keeps the logical name and
// partitionValues are keyed by the physical one.
func TestPartitionedColumnMapping(t *testing.T) {
	for _, mode := range []Mode{ModeDV, ModeCoW} {
		t.Run(string(mode), func(t *testing.T) {
			store := newMemStore()
			opts := Options{Store: store, TableName: "items", Mode: mode, PartitionBy: []string{"name"}}
			s, err := Open(t.Context(), opts)
			require.NoError(t, err)
			_, err = s.Apply(t.Context(), batchOf(
				ev{op: opC, id: 1, pos: 1, name: "a", price: 100, notes: "x", offset: 0},
				ev{op: opC, id: 2, pos: 2, name: "b", price: 200, notes: "y", offset: 1},
			))
			require.NoError(t, err)
			s, err = Open(t.Context(), opts)
			require.NoError(t, err)
			_, err = s.Apply(t.Context(), batchOf(
				ev{op: opU, id: 1, pos: 3, name: "b", price: 150, unavailable: true, offset: 2},
				ev{op: opD, id: 2, pos: 4, offset: 3},
				ev{op: opC, id: 3, pos: 5, name: "c", price: 300, notes: "z", offset: 4},
			))
			require.NoError(t, err)
			snap := latestSnapshot(t, store)
			require.Equal(t, "name", snap.Metadata().Configuration[deltalog.PropColumnMappingMode])
			require.Equal(t, []string{"name"}, snap.Metadata().PartitionColumns)
			f, _ := snap.Schema().Field("name")
			phys := deltalog.PhysicalName(f)
			require.NotEqual(t, "name", phys)
			got := map[string]bool{}
			for _, add := range snap.Files() {
				require.Len(t, add.PartitionValues, 1)
				v, ok := add.PartitionValues[phys]
				require.True(t, ok, "keyed by the physical name: %v", add.PartitionValues)
				got[*v] = true
			}
			require.Equal(t, map[string]bool{"b": true, "c": true}, got)
			items := readItems(t, store)
			require.Equal(t, map[int32]item{
				1: {name: "b", price: 150, notes: "x", pos: pos(3).Hex(), op: "u"},
				3: {name: "c", price: 300, notes: "z", pos: pos(5).Hex(), op: "c"},
			}, items)
		})
	}
}
