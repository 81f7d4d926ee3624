package merge

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

var (
	kDate = codecs.Type{Kind: codecs.KindDate}
	kLong = codecs.Type{Kind: codecs.KindLong}

	// shipLayout is a table partitioned in the tests: no column needs
	// column mapping, so files live in Hive-style partition directories.
	shipLayout = &codecs.Layout{SchemaID: 11, Name: "sales.dbo.ship.Value", Columns: []codecs.Column{
		{Name: "id", Type: kInt},
		{Name: "region", Type: kStr, Nullable: true},
		{Name: "day", Type: kDate, Nullable: true},
		{Name: "qty", Type: kLong, Nullable: true},
		{Name: "blob", Type: codecs.Type{Kind: codecs.KindBinary}, Nullable: true},
		{Name: "ratio", Type: codecs.Type{Kind: codecs.KindDouble}, Nullable: true},
	}}
	shipKey = &codecs.Layout{SchemaID: 12, Name: "sales.dbo.ship.Key", Columns: []codecs.Column{{Name: "id", Type: kInt}}}
	shipID  = codecs.TableID{Database: "sales", Schema: "dbo", Table: "ship"}
)

// shipEv is one event of the ship table; day < 0 means a null day, and a
// nil region a null region.
type shipEv struct {
	op     codecs.Op
	id     int32
	pos    int
	region any
	day    int32
	qty    int64
	offset int64
}

func (e shipEv) record() Record {
	c := codecs.Change{Op: e.op, Table: shipID, Pos: pos(e.pos), CommitMillis: 1_700_000_000_000 + int64(e.pos)}
	if e.op != codecs.OpTruncate {
		var day any
		if e.day >= 0 {
			day = e.day
		}
		c.Layout, c.KeyLayout, c.KeyIndex = shipLayout, shipKey, []int{0}
		c.Key = []any{e.id}
		c.Row = []any{e.id, e.region, day, e.qty, []byte{1, 2}, 0.5}
	}
	return Record{TopicPartition: cdctable.TopicPartition{Topic: "sales.dbo.ship", Partition: 0}, Offset: e.offset, Change: c}
}

func shipBatch(evs ...shipEv) Batch {
	b := Batch{LastOffsets: map[cdctable.TopicPartition]int64{}}
	for _, e := range evs {
		r := e.record()
		b.Records = append(b.Records, r)
		b.LastOffsets[r.TopicPartition] = max(b.LastOffsets[r.TopicPartition], r.Offset)
	}
	return b
}

// shipModel applies events the way the table should: the latest position of
// a key wins, a delete removes it, a truncate clears everything before it.
type shipModel map[int32]shipEv

func (m shipModel) apply(evs ...shipEv) {
	for _, e := range evs {
		switch {
		case e.op == codecs.OpTruncate:
			clear(m)
		case e.op == codecs.OpDelete:
			delete(m, e.id)
		default:
			m[e.id] = e
		}
	}
}

// rows renders the model as "id|region|day|qty", with an empty region
// shown as null (Delta stores an empty partition value as null).
func (m shipModel) rows() []string {
	var out []string
	for _, e := range m {
		region := e.region
		if region == "" {
			region = nil
		}
		var day any
		if e.day >= 0 {
			day = e.day
		}
		out = append(out, fmt.Sprintf("%d|%v|%v|%d", e.id, region, day, e.qty))
	}
	slices.Sort(out)
	return out
}

// readShip reads the live rows of the ship table back with deltalog and
// datafile, and checks that every file holds the rows of exactly the
// partition its add names, in the directory Hive-style readers expect.
func readShip(t *testing.T, store deltalog.Store) []string {
	t.Helper()
	tbl, err := deltalog.Open(t.Context(), store)
	require.NoError(t, err)
	snap, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	meta := snap.Metadata()
	schema := snap.Schema()
	idx := func(name string) int {
		i := slices.IndexFunc(schema.Fields, func(f deltalog.StructField) bool { return f.Name == name })
		require.GreaterOrEqual(t, i, 0, name)
		return i
	}
	var out []string
	for _, add := range snap.Files() {
		require.ElementsMatch(t, meta.PartitionColumns, slices.Collect(maps.Keys(add.PartitionValues)), add.Path)
		if len(meta.PartitionColumns) > 0 {
			// The directories name the partition: column=value, Hive-escaped
			// (%XX) inside the URI-escaped path.
			p, err := url.PathUnescape(add.Path)
			require.NoError(t, err)
			segs := strings.Split(p, "/")
			require.Len(t, segs, len(meta.PartitionColumns)+1, p)
			for i, c := range meta.PartitionColumns {
				name, val, ok := strings.Cut(segs[i], "=")
				require.True(t, ok, p)
				require.Equal(t, c, name)
				val, err = url.PathUnescape(val)
				require.NoError(t, err)
				want := "__HIVE_DEFAULT_PARTITION__"
				if v := add.PartitionValues[c]; v != nil {
					want = *v
				}
				require.Equal(t, want, val, p)
			}
		}
		rows, err := datafile.Read(t.Context(), store, &add, schema, datafile.ReadOptions{Properties: meta.Configuration, PartitionColumns: meta.PartitionColumns})
		require.NoError(t, err)
		for _, r := range rows {
			for _, c := range meta.PartitionColumns {
				want, err := datafile.PartitionValue(schema.Fields[idx(c)].Type, r[idx(c)])
				require.NoError(t, err)
				require.Equal(t, want, add.PartitionValues[c], "row %v of %s", r, add.Path)
			}
			out = append(out, fmt.Sprintf("%v|%v|%v|%v", r[idx("id")], r[idx("region")], r[idx("day")], r[idx("qty")]))
		}
	}
	slices.Sort(out)
	return out
}
