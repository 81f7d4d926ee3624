//go:build integration

package merge

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// partitionedShipBatches are the batches of TestPartitionedMerge: awkward and
// null partition values, updates that move rows, deletes and a truncate.
func partitionedShipBatches() [][]shipEv {
	return [][]shipEv{
		{
			{op: opC, id: 1, pos: 1, region: "eu", day: 19000, qty: 1},
			{op: opC, id: 2, pos: 2, region: "us", day: 19000, qty: 2},
			{op: opC, id: 3, pos: 3, region: "a/b=c", day: -1, qty: 3},
			{op: opC, id: 4, pos: 4, region: "50% off", day: 19001, qty: 4},
			{op: opC, id: 5, pos: 5, region: "ümlaut ü", day: 19001, qty: 5},
			{op: opC, id: 6, pos: 6, region: "", day: 19000, qty: 6},
			{op: opC, id: 7, pos: 7, region: nil, day: 19000, qty: 7},
			{op: opC, id: 8, pos: 8, region: "sp ace?#", day: 19000, qty: 8},
			{op: opC, id: 10, pos: 9, region: "eu", day: 19000, qty: 10},
			{op: opC, id: 11, pos: 10, region: "eu", day: 19001, qty: 11},
		},
		{
			{op: opU, id: 1, pos: 11, region: "eu", day: 19000, qty: 21},
			{op: opU, id: 2, pos: 12, region: "eu", day: 19000, qty: 22},
			{op: opU, id: 3, pos: 13, region: "a/b=c", day: 19002, qty: 23},
			{op: opD, id: 4, pos: 14, region: "50% off", day: 19001, qty: 4},
			{op: opC, id: 9, pos: 15, region: "us", day: 19000, qty: 9},
		},
		{
			{op: opU, id: 10, pos: 16, region: nil, day: 19000, qty: 30},
			{op: opD, id: 6, pos: 17, region: "", day: 19000, qty: 6},
			{op: opU, id: 7, pos: 18, region: "us", day: -1, qty: 27},
			{op: opU, id: 11, pos: 19, region: "", day: 19001, qty: 31},
		},
	}
}

// shipCanonical reads the ship table with our reader and renders its rows
// the way fulltier reports them, without the commit time.
func shipCanonical(t *testing.T, store deltalog.Store) []map[string]any {
	t.Helper()
	snap := latestSnapshot(t, store)
	schema := snap.Schema()
	var out []map[string]any
	for _, add := range snap.Files() {
		rows, err := datafile.Read(t.Context(), store, &add, schema, datafile.ReadOptions{Properties: snap.Metadata().Configuration, PartitionColumns: snap.Metadata().PartitionColumns})
		require.NoError(t, err)
		for _, r := range rows {
			m := map[string]any{}
			for i, f := range schema.Fields {
				var v any
				switch x := r[i].(type) {
				case nil:
				case int32:
					if f.Name == "day" {
						v = time.Unix(int64(x)*86400, 0).UTC().Format(time.DateOnly)
					} else {
						v = json.Number(strconv.Itoa(int(x)))
					}
				case int64:
					v = json.Number(strconv.FormatInt(x, 10))
				case float64:
					v = json.Number(strconv.FormatFloat(x, 'g', -1, 64))
				case []byte:
					v = hex.EncodeToString(x)
				default:
					v = x
				}
				if f.Name != cdctable.ColCommitTime {
					m[f.Name] = v
				}
			}
			out = append(out, m)
		}
	}
	return out
}

// TestPartitionedReadersAgree merges into tables partitioned by a string and
// a date column, with deletion vectors and with copy-on-write, and checks
// that delta-rs, DuckDB and Spark read exactly the rows our reader reads, and
// that delta-rs, filtering on the partition columns, returns the rows of
// those partitions.
func TestPartitionedReadersAgree(t *testing.T) {
	type table struct {
		mode Mode
		dir  string
		want []map[string]any
		txn  int64
	}
	var tables []*table
	for _, mode := range []Mode{ModeDV, ModeCoW} {
		tb := &table{mode: mode, dir: t.TempDir()}
		store, err := localstore.New(localstore.Options{Dir: tb.dir})
		require.NoError(t, err)
		s := openShip(t, store, mode, "region", "day")
		off := int64(0)
		for i, evs := range partitionedShipBatches() {
			for j := range evs {
				evs[j].offset = off
				off++
			}
			if i == 2 {
				s = openShip(t, store, mode, "region", "day")
			}
			_, err := s.Apply(t.Context(), shipBatch(evs...))
			require.NoError(t, err)
		}
		tb.txn = off - 1
		tb.want = shipCanonical(t, store)
		require.Len(t, tb.want, 9)
		tables = append(tables, tb)
	}
	appID := cdctable.TopicPartition{Topic: "sales.dbo.ship", Partition: 0}.AppID()
	var reqs []fulltier.Request
	for _, tb := range tables {
		reqs = append(reqs, engineRequests(tb.dir, appID)...)
	}
	// A column-mapped table: partitionValues keyed by physical names.
	cmDir := t.TempDir()
	cmStore, err := localstore.New(localstore.Options{Dir: cmDir})
	require.NoError(t, err)
	cm, err := Open(t.Context(), Options{Store: cmStore, TableName: "items", PartitionBy: []string{"name"}})
	require.NoError(t, err)
	for _, b := range []Batch{
		batchOf(ev{op: opC, id: 1, pos: 1, name: "a", price: 100, notes: "x", offset: 0},
			ev{op: opC, id: 2, pos: 2, name: "b", price: 200, notes: "y", offset: 1},
			ev{op: opC, id: 3, pos: 3, name: "a", price: 300, notes: "z", offset: 2}),
		batchOf(ev{op: opU, id: 1, pos: 4, name: "b", price: 150, unavailable: true, offset: 3},
			ev{op: opD, id: 2, pos: 5, offset: 4},
			ev{op: opC, id: 4, pos: 6, name: "c", price: 400, notes: "w", offset: 5}),
	} {
		_, err := cm.Apply(t.Context(), b)
		require.NoError(t, err)
	}
	var cmWant []map[string]any
	for id, it := range readItems(t, cmStore) {
		cmWant = append(cmWant, map[string]any{
			"id": json.Number(strconv.Itoa(int(id))), "name": it.name, "notes": it.notes,
			"Unit Price": fmt.Sprintf("%.2f", float64(it.price)/100), cdctable.ColPosition: it.pos, cdctable.ColOp: it.op,
		})
	}
	require.Len(t, cmWant, 3)
	reqs = append(reqs, engineRequests(cmDir, "")...)
	// Filters on the partition columns, read by delta-rs from the DV table.
	filters := []struct {
		sql  string
		keep func(r map[string]any) bool
	}{
		{"region = 'eu'", func(r map[string]any) bool { return r["region"] == "eu" }},
		{"region IS NULL", func(r map[string]any) bool { return r["region"] == nil }},
		{"region = 'a/b=c' AND day = DATE '2022-01-10'", func(r map[string]any) bool { return r["region"] == "a/b=c" && r["day"] == "2022-01-10" }},
		{"day IS NULL", func(r map[string]any) bool { return r["day"] == nil }},
	}
	for _, f := range filters {
		reqs = append(reqs, fulltier.Request{Engine: fulltier.DeltaRS, Path: tables[0].dir, ReadOptions: fulltier.ReadOptions{Filter: f.sql}})
	}
	got := fulltier.Read(t, reqs...)
	full := len(tables) * len(fulltier.Engines())
	for i, g := range got[:full] {
		tb := tables[i/len(fulltier.Engines())]
		t.Run(fmt.Sprintf("%s/%s", tb.mode, g.Engine), func(t *testing.T) {
			require.Empty(t, g.Err)
			require.Equal(t, []string{"id", "region", "day", "qty", "blob", "ratio", cdctable.ColPosition, cdctable.ColOp, cdctable.ColCommitTime}, g.Columns())
			var rows []map[string]any
			for _, r := range g.Rows {
				delete(r, cdctable.ColCommitTime)
				rows = append(rows, r)
			}
			require.ElementsMatch(t, tb.want, rows)
			if g.Engine != fulltier.DuckDB {
				require.NotNil(t, g.Txn[appID])
				require.Equal(t, tb.txn, *g.Txn[appID])
			}
		})
	}
	for _, g := range got[full : full+len(fulltier.Engines())] {
		t.Run("column-mapping/"+string(g.Engine), func(t *testing.T) {
			require.Empty(t, g.Err)
			require.Equal(t, []string{"id", "name", "Unit Price", "notes", cdctable.ColPosition, cdctable.ColOp, cdctable.ColCommitTime}, g.Columns())
			var rows []map[string]any
			for _, r := range g.Rows {
				delete(r, cdctable.ColCommitTime)
				rows = append(rows, r)
			}
			want := cmWant
			if g.Engine == fulltier.DuckDB {
				// duckdb-delta looks partition values up by the logical name
				// and reads partition columns of column-mapped tables as null
				// (duckdb/duckdb-delta#343); Spark and delta-rs read them.
				// This fails once DuckDB is fixed: then drop the exception.
				want = nil
				for _, r := range cmWant {
					r = maps.Clone(r)
					r["name"] = nil
					want = append(want, r)
				}
			}
			require.ElementsMatch(t, want, rows)
		})
	}
	full += len(fulltier.Engines())
	for i, g := range got[full:] {
		f := filters[i]
		t.Run("deltars-filter/"+f.sql, func(t *testing.T) {
			require.Empty(t, g.Err)
			var want []map[string]any
			for _, r := range tables[0].want {
				if f.keep(r) {
					want = append(want, r)
				}
			}
			require.NotEmpty(t, want, "the filter selects rows")
			var rows []map[string]any
			for _, r := range g.Rows {
				delete(r, cdctable.ColCommitTime)
				rows = append(rows, r)
			}
			require.ElementsMatch(t, want, rows)
		})
	}
	require.True(t, slices.ContainsFunc(tables[0].want, func(r map[string]any) bool { return r["region"] == "ümlaut ü" }))
}

// TestPartitionedChangeDataFeedReaders writes the change data feed of tables
// partitioned by name, whose updates move rows between partitions, and
// checks that delta-rs and Spark return the feed our reader finds.
func TestPartitionedChangeDataFeedReaders(t *testing.T) {
	history := func(moved string) [][]ev {
		return [][]ev{
			{{op: opC, id: 1, pos: 1, name: "a", notes: "n1", offset: 0}, {op: opC, id: 2, pos: 2, name: "b", notes: "n2", offset: 1}, {op: opC, id: 3, pos: 3, name: "a", notes: "n3", offset: 2}},
			{{op: opU, id: 1, pos: 4, name: "b", notes: "n1", offset: 3}, {op: opD, id: 2, pos: 5, offset: 4}, {op: opC, id: 4, pos: 6, name: "", notes: "n4", offset: 5}},
			{{op: opU, id: 3, pos: 7, name: moved, unavailable: true, offset: 6}, {op: opU, id: 4, pos: 8, name: "a", notes: "n5", offset: 7}},
			{{op: opT, pos: 9, offset: 8}, {op: opC, id: 5, pos: 10, name: "e", notes: "n5", offset: 9}},
			{{op: opU, id: 5, pos: 11, name: "a", notes: "n6", offset: 10}},
		}
	}
	type table struct {
		dir  string
		want []string
		// escaped tables have a partition directory with an escaped
		// character, whose change data files delta-rs 1.6 cannot find.
		escaped bool
	}
	var tables []*table
	for _, mode := range []Mode{ModeDV, ModeCoW} {
		// The DV table moves a row to a partition whose directory name is
		// escaped; the CoW one to a plain partition.
		tb := &table{dir: t.TempDir(), escaped: mode == ModeDV}
		moved := "cd"
		if tb.escaped {
			moved = "c/d"
		}
		store, err := localstore.New(localstore.Options{Dir: tb.dir})
		require.NoError(t, err)
		s, err := Open(t.Context(), Options{Store: store, TableName: "items", Mode: mode, EnableChangeDataFeed: true, PartitionBy: []string{"name"}})
		require.NoError(t, err)
		for _, evs := range history(moved) {
			_, err := s.Apply(t.Context(), withoutPrice(batchOf(evs...)))
			require.NoError(t, err)
		}
		require.Empty(t, latestSnapshot(t, store).Metadata().Configuration[deltalog.PropColumnMappingMode])
		tb.want = feedLines(t, store, s.Version())
		require.Contains(t, tb.want, cdfLine(1, ChangeUpdatePreimage, 1, "a", "n1"))
		require.Contains(t, tb.want, cdfLine(1, ChangeUpdatePostimage, 1, "b", "n1"))
		tables = append(tables, tb)
	}
	args := []string{fulltier.ScriptsDir(t)}
	for _, tb := range tables {
		args = append(args, tb.dir)
	}
	var got []cdfReadResult
	require.NoError(t, json.Unmarshal([]byte(fulltier.PythonCode(t, cdfReadScript, args...)), &got))
	require.Len(t, got, len(tables))
	for i, tb := range tables {
		g := got[i]
		t.Run(fmt.Sprintf("%d/deltars", i), func(t *testing.T) {
			if tb.escaped {
				// delta-rs 1.6 load_cdf does not URI-decode cdc paths (its
				// table scans decode add paths): it looks for "c%252Fd".
				// This fails once it is fixed: then check its rows too.
				require.Contains(t, g.DeltaRSErr, "c%252Fd")
				require.Contains(t, g.DeltaRSErr, "not found")
				return
			}
			require.Empty(t, g.DeltaRSErr)
			require.ElementsMatch(t, tb.want, cdfLines(g.DeltaRS))
		})
		t.Run(fmt.Sprintf("%d/spark", i), func(t *testing.T) {
			require.Empty(t, g.SparkErr)
			require.ElementsMatch(t, tb.want, cdfLines(g.Spark))
		})
	}
}
