package cdcmodel

import (
	"bufio"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
)

// The other side of the comparison: a Delta table version read back with
// deltalog and datafile, in the model's shapes.

// colChangeType is the change data column holding the change type.
const colChangeType = "_change_type"

// Version is one table version as read back.
type Version struct {
	// Columns are the schema's columns, in order.
	Columns []string
	// Rows are the live rows by RowKey.
	Rows map[string]Row
	// Changes is the version's change data feed: its cdc files when it has
	// any, else its added rows as inserts and removed rows as deletes, as
	// the protocol tells readers.
	Changes []Change
	// Txns are the version's txn application versions.
	Txns map[string]int64
}

// ReadVersion reads version v of the table in store; keyColumns key its rows.
func ReadVersion(ctx context.Context, store deltalog.Store, v int64, keyColumns []string) (*Version, error) {
	tbl, err := deltalog.Open(ctx, store)
	if err != nil {
		return nil, err
	}
	snap, err := tbl.SnapshotAt(ctx, v)
	if err != nil {
		return nil, err
	}
	return ReadSnapshot(ctx, store, snap, keyColumns)
}

// ReadSnapshot reads the version snap of the table in store.
func ReadSnapshot(ctx context.Context, store deltalog.Store, snap *deltalog.Snapshot, keyColumns []string) (*Version, error) {
	v := snap.Version()
	schema, meta := snap.Schema(), snap.Metadata()
	out := &Version{Rows: map[string]Row{}, Txns: map[string]int64{}}
	for _, f := range schema.Fields {
		out.Columns = append(out.Columns, f.Name)
	}
	for id, txn := range snap.Txns() {
		out.Txns[id] = txn.Version
	}
	read := func(add *deltalog.Add, schema *deltalog.StructType) ([]Row, error) {
		rows, err := datafile.Read(ctx, store, add, schema, datafile.ReadOptions{Properties: meta.Configuration, PartitionColumns: meta.PartitionColumns})
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", add.Path, err)
		}
		out := make([]Row, len(rows))
		for i, r := range rows {
			out[i] = Row{}
			for j, f := range schema.Fields {
				out[i][f.Name] = r[j]
			}
		}
		return out, nil
	}
	for _, add := range snap.Files() {
		rows, err := read(&add, schema)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			k := RowKey(r, keyColumns)
			if _, dup := out.Rows[k]; dup {
				return nil, fmt.Errorf("version %d: key %s stored twice", v, k)
			}
			out.Rows[k] = r
		}
	}

	actions, err := commitActions(ctx, store, v)
	if err != nil {
		return nil, err
	}
	cdfSchema := &deltalog.StructType{Fields: append(append([]deltalog.StructField{}, schema.Fields...),
		deltalog.StructField{Name: colChangeType, Type: deltalog.TypeString, Nullable: true})}
	hasCDC := false
	for _, a := range actions {
		if a.CDC == nil {
			continue
		}
		hasCDC = true
		rows, err := read(&deltalog.Add{Path: a.CDC.Path, PartitionValues: a.CDC.PartitionValues, Size: a.CDC.Size}, cdfSchema)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			typ, _ := r[colChangeType].(string)
			delete(r, colChangeType)
			out.Changes = append(out.Changes, Change{Type: typ, Row: r})
		}
	}
	for _, a := range actions {
		if hasCDC {
			break
		}
		var add *deltalog.Add
		typ := Insert
		switch {
		case a.Add != nil && a.Add.DataChange:
			add = a.Add
		case a.Remove != nil && a.Remove.DataChange:
			rm := a.Remove
			add, typ = &deltalog.Add{Path: rm.Path, PartitionValues: rm.PartitionValues, DeletionVector: rm.DeletionVector}, Delete
		default:
			continue
		}
		rows, err := read(add, schema)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			out.Changes = append(out.Changes, Change{Type: typ, Row: r})
		}
	}
	return out, nil
}

// commitActions reads the actions of the commit file of version v.
func commitActions(ctx context.Context, store deltalog.Store, v int64) ([]deltalog.Action, error) {
	rc, err := store.Get(ctx, fmt.Sprintf("_delta_log/%020d.json", v))
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	var out []deltalog.Action
	sc := bufio.NewScanner(rc)
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		a, ok, err := deltalog.ParseLogLine(sc.Bytes())
		if err != nil {
			return nil, fmt.Errorf("version %d: %w", v, err)
		}
		if ok {
			out = append(out, a)
		}
	}
	return out, sc.Err()
}

// RenderChanges renders a change data feed as sorted lines of the named
// columns, for comparisons with readable diffs.
func RenderChanges(cs []Change, columns []string) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = renderRow(c.Type, c.Row, columns)
	}
	slices.Sort(out)
	return out
}

// RenderRows renders rows as sorted lines of the named columns.
func RenderRows(rows map[string]Row, columns []string) []string {
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		out = append(out, renderRow("", r, columns))
	}
	slices.Sort(out)
	return out
}

func renderRow(prefix string, r Row, columns []string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for _, c := range columns {
		fmt.Fprintf(&b, " %s=%#v", c, r[c])
	}
	return b.String()
}
