package tableops

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// opRenameColumn is Spark's operation name for ALTER TABLE RENAME COLUMN.
const opRenameColumn = "RENAME COLUMN"

// RenameColumn commits ALTER TABLE RENAME COLUMN from TO for a top-level column: its
// logical name changes, its physical name and id stay, so the data files are not
// touched and the column keeps its values. Delta needs column mapping for it. edit,
// when set, may adjust the renamed field further (its metadata) before the commit.
func RenameColumn(ctx context.Context, t *deltalog.Table, snap *deltalog.Snapshot, from, to string, edit func(*deltalog.StructField)) (int64, error) {
	meta := snap.Metadata()
	if deltalog.ColumnMappingMode(&meta) == "none" {
		return 0, &deltalog.PropertyError{Key: deltalog.PropColumnMappingMode, Value: "none",
			Reason: "renaming a column needs column mapping: set delta.columnMapping.mode=name first"}
	}
	schema := deltalog.CloneType(snap.Schema()).(*deltalog.StructType)
	i := slices.IndexFunc(schema.Fields, func(f deltalog.StructField) bool { return f.Name == from })
	if i < 0 {
		return 0, fmt.Errorf("tableops: no column %q in the table", from)
	}
	if to == "" || slices.ContainsFunc(schema.Fields, func(f deltalog.StructField) bool { return strings.EqualFold(f.Name, to) }) {
		return 0, fmt.Errorf("tableops: cannot rename %q to %q: the name is empty or taken", from, to)
	}
	schema.Fields[i].Name = to
	if edit != nil {
		edit(&schema.Fields[i])
	}
	for j, p := range meta.PartitionColumns {
		if p == from {
			meta.PartitionColumns = slices.Clone(meta.PartitionColumns)
			meta.PartitionColumns[j] = to
		}
	}
	ss, err := schema.SchemaString()
	if err != nil {
		return 0, err
	}
	meta.SchemaString = ss
	op := deltalog.Operation{Name: opRenameColumn, Parameters: map[string]string{"oldColumnPath": from, "newColumnPath": to}}
	res, err := t.Commit(ctx, snap, []deltalog.Action{{Metadata: &meta}}, op, deltalog.ReadWholeTable())
	if err != nil {
		return 0, fmt.Errorf("committing %s: %w", opRenameColumn, err)
	}
	return res.Version, nil
}
