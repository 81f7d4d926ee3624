package merge

import (
	"bufio"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// plainLayout is itemsLayout without the column whose name needs column
// mapping.
var plainLayout = &codecs.Layout{SchemaID: 3, Name: "sales.dbo.items.Value", Columns: []codecs.Column{
	itemsLayout.Columns[0], itemsLayout.Columns[1], itemsLayout.Columns[3],
}}

// withoutPrice moves a batch of items events to plainLayout.
func withoutPrice(b Batch) Batch {
	for i := range b.Records {
		c := &b.Records[i].Change
		if c.Layout == nil {
			continue
		}
		c.Layout, c.Row = plainLayout, []any{c.Row[0], c.Row[1], c.Row[3]}
		if len(c.Unavailable) > 0 {
			c.Unavailable = []int{2}
		}
	}
	return b
}

// changeRow is one row of the change data feed of the items table.
type changeRow struct {
	kind string
	id   int32
	item
}

func (c changeRow) String() string {
	return fmt.Sprintf("%s %d %q %q %d %s del=%t", c.kind, c.id, c.name, c.notes, c.price, c.op, c.deleted)
}

// commitActions reads the actions of one commit file.
func commitActions(t *testing.T, store deltalog.Store, version int64) []deltalog.Action {
	t.Helper()
	rc, err := store.Get(t.Context(), fmt.Sprintf("_delta_log/%020d.json", version))
	require.NoError(t, err)
	defer rc.Close()
	var out []deltalog.Action
	sc := bufio.NewScanner(rc)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		a, ok, err := deltalog.ParseLogLine(sc.Bytes())
		require.NoError(t, err)
		if ok {
			out = append(out, a)
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// tableChanges returns the change rows of one version as the Delta protocol
// tells a CDF reader to find them: the cdc files when the commit has any,
// otherwise its added rows as inserts and removed rows as deletes. It also
// returns the number of cdc files.
func tableChanges(t *testing.T, store deltalog.Store, version int64) ([]changeRow, int) {
	t.Helper()
	tbl, err := deltalog.Open(t.Context(), store)
	require.NoError(t, err)
	snap, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	schema, conf := snap.Schema(), snap.Metadata().Configuration
	cdfSchema := &deltalog.StructType{Fields: append(append([]deltalog.StructField{}, schema.Fields...),
		deltalog.StructField{Name: ColChangeType, Type: deltalog.TypeString, Nullable: true})}

	actions := commitActions(t, store, version)
	var out []changeRow
	read := func(add *deltalog.Add, schema *deltalog.StructType, kind string) {
		rows, err := datafile.Read(t.Context(), store, add, schema, datafile.ReadOptions{Properties: conf})
		require.NoError(t, err)
		for _, r := range rows {
			out = append(out, toChangeRow(t, schema, r, kind))
		}
	}
	cdcs := 0
	for _, a := range actions {
		if a.CDC != nil {
			cdcs++
			require.False(t, a.CDC.DataChange, "cdc actions have dataChange=false")
			require.Contains(t, a.CDC.Path, changeDataDir+"/")
			read(&deltalog.Add{Path: a.CDC.Path, PartitionValues: a.CDC.PartitionValues, Size: a.CDC.Size}, cdfSchema, "")
		}
	}
	if cdcs > 0 {
		return out, cdcs
	}
	for _, a := range actions {
		switch {
		case a.Add != nil && a.Add.DataChange:
			read(a.Add, schema, ChangeInsert)
		case a.Remove != nil && a.Remove.DataChange:
			rm := a.Remove
			read(&deltalog.Add{Path: rm.Path, PartitionValues: rm.PartitionValues, DeletionVector: rm.DeletionVector}, schema, ChangeDelete)
		}
	}
	return out, 0
}

// toChangeRow decodes a row of the items table; kind "" takes the change
// type from the row.
func toChangeRow(t *testing.T, schema *deltalog.StructType, r []any, kind string) changeRow {
	t.Helper()
	get := func(name string) any {
		for i, f := range schema.Fields {
			if f.Name == name {
				return r[i]
			}
		}
		return nil
	}
	c := changeRow{kind: kind, id: get("id").(int32)}
	if kind == "" {
		c.kind = get(ColChangeType).(string)
	}
	c.pos, _ = get(cdctable.ColPosition).(string)
	c.op, _ = get(cdctable.ColOp).(string)
	c.name, _ = get("name").(string)
	c.notes, _ = get("notes").(string)
	if d, ok := get("Unit Price").(decimal128.Num); ok {
		c.price = d.Big().Int64()
	}
	c.deleted, _ = get(cdctable.ColDeleted).(bool)
	return c
}

func changeStrings(rows []changeRow) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.String()
	}
	return out
}
