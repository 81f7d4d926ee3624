package merge

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
)

// Change data feed (ADR 0024): a commit of a table with
// delta.enableChangeDataFeed carries cdc actions naming _change_data files
// that hold the changed rows and their _change_type. Readers derive
// _commit_version and _commit_timestamp from the commit, so the files do
// not store them.

// ColChangeType is the change data column saying what happened to a row.
const ColChangeType = "_change_type"

// Values of ColChangeType.
const (
	ChangeInsert          = "insert"
	ChangeUpdatePreimage  = "update_preimage"
	ChangeUpdatePostimage = "update_postimage"
	ChangeDelete          = "delete"
)

// changeDataDir holds the change data files; readers other than CDF ignore
// directories starting with '_'.
const changeDataDir = "_change_data"

// cdfReserved are the column names CDF readers add; a table having one
// cannot carry a change data feed.
var cdfReserved = []string{ColChangeType, "_commit_version", "_commit_timestamp"}

// cdfEnabled reports whether the table's properties ask for a change data
// feed. The property decides, whoever set it.
func cdfEnabled(conf map[string]string) bool {
	return strings.EqualFold(strings.TrimSpace(conf[deltalog.PropEnableChangeDataFeed]), "true")
}

// change is one row of the change data feed of a batch: either a new row
// (p.rows[row]) or a stored row (row oldRow of the live file path).
type change struct {
	kind   string
	row    int // index in mergePlan.rows, or -1 for a stored row
	path   string
	oldRow int
}

// newChange records a new row of the plan as a change.
func newChange(kind string, row int) change { return change{kind: kind, row: row} }

// storedChange records a stored row as a change.
func storedChange(kind, path string, oldRow int) change {
	return change{kind: kind, row: -1, path: path, oldRow: oldRow}
}

// changeDataSchema is the table schema plus the change type column.
func changeDataSchema(st *tableState, table string) (*deltalog.StructType, error) {
	if err := checkChangeDataColumns(st.Schema, table); err != nil {
		return nil, err
	}
	fields := make([]deltalog.StructField, 0, len(st.Schema.Fields)+1)
	fields = append(fields, st.Schema.Fields...)
	// No column mapping metadata: the column keeps its name in the files, as
	// readers expect of this column.
	fields = append(fields, deltalog.StructField{Name: ColChangeType, Type: deltalog.TypeString, Nullable: true, Metadata: map[string]any{}})
	return &deltalog.StructType{Fields: fields}, nil
}

// checkChangeDataColumns refuses a schema with a column a CDF reader adds.
func checkChangeDataColumns(schema *deltalog.StructType, table string) error {
	for _, f := range schema.Fields {
		for _, r := range cdfReserved {
			if strings.EqualFold(f.Name, r) {
				return &SchemaError{Table: table, Reason: fmt.Sprintf("column %q is reserved by the change data feed", f.Name),
					Remedy: "rename the column at the source or with a Debezium transform, or turn the change data feed off"}
			}
		}
	}
	return nil
}

// needsChangeData reports whether the batch's changes must be written as
// change data files. Without cdc actions readers take the commit's added
// rows as inserts and removed rows as deletes, so a commit that only
// inserts (it removes no file) needs none, and a snapshot load is not
// written twice.
func needsChangeData(p *mergePlan) bool {
	if len(p.removes) > 0 {
		return true
	}
	for _, c := range p.changes {
		if c.kind != ChangeInsert {
			return true
		}
	}
	return false
}

// writeChangeData writes the batch's change data files and adds their cdc
// actions to the plan, with a delete for every row a truncate removes.
func (s *Sink) writeChangeData(ctx context.Context, p *mergePlan) error {
	if !cdfEnabled(p.st.meta.Configuration) || !needsChangeData(p) {
		return nil
	}
	schema, err := changeDataSchema(p.st, s.opts.TableName)
	if err != nil {
		return err
	}
	// One file at a time: a truncate may cover the whole table.
	for _, path := range slices.Sorted(maps.Keys(p.truncated)) {
		rows, ok := p.readRows[path]
		if !ok {
			var err error
			rows, err = datafile.Read(ctx, s.opts.Store, p.files[path], p.st.Schema, datafile.ReadOptions{
				Properties: p.st.meta.Configuration, PartitionColumns: p.st.meta.PartitionColumns, DeletedRows: roaring64.New(),
			})
			if err != nil {
				return fmt.Errorf("reading %s: %w", path, err)
			}
		}
		var out [][]any
		it := p.truncated[path].Iterator()
		for it.HasNext() {
			r := it.Next()
			if r >= uint64(len(rows)) {
				return fmt.Errorf("table %s: row %d beyond the %d rows of %s", s.opts.TableName, r, len(rows), path)
			}
			out = append(out, append(slices.Clone(rows[r]), ChangeDelete))
		}
		if err := s.writeChangeRows(ctx, p, schema, out); err != nil {
			return err
		}
	}
	out := make([][]any, 0, len(p.changes))
	for _, c := range p.changes {
		var row []any
		if c.row >= 0 {
			row = p.rows[c.row]
		} else {
			old, err := p.fullRows(ctx, s.opts.Store, c.path)
			if err != nil {
				return err
			}
			if c.oldRow >= len(old) {
				return fmt.Errorf("table %s: row %d beyond the %d rows of %s", s.opts.TableName, c.oldRow, len(old), c.path)
			}
			row = old[c.oldRow]
		}
		// A copy: the stored and new rows are shared with the data files.
		out = append(out, append(append(make([]any, 0, len(row)+1), row...), c.kind))
	}
	return s.writeChangeRows(ctx, p, schema, out)
}

// writeChangeRows writes rows (aligned with schema) as change data files.
func (s *Sink) writeChangeRows(ctx context.Context, p *mergePlan, schema *deltalog.StructType, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	w, err := datafile.NewWriter(datafile.Options{
		Schema: schema, PartitionColumns: p.st.meta.PartitionColumns, Properties: p.st.meta.Configuration,
		TargetFileSize: s.opts.TargetFileSize, Dir: changeDataDir, NamePrefix: "cdc", Now: s.opts.Now,
	})
	if err != nil {
		return fmt.Errorf("table %s: %w", s.opts.TableName, err)
	}
	adds, err := w.Write(ctx, s.opts.Store, rows)
	if err != nil {
		return fmt.Errorf("writing change data of %s: %w", s.opts.TableName, err)
	}
	for _, a := range adds {
		p.cdcs = append(p.cdcs, deltalog.Action{CDC: &deltalog.CDC{
			Path: a.Path, PartitionValues: a.PartitionValues, Size: a.Size, DataChange: false,
		}})
	}
	return nil
}
