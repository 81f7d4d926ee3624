package cdctable

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// ErrNotCDCTable means the table was not created by cdc2delta (no key columns property).
var ErrNotCDCTable = errors.New("cdctable: table has no " + PropKeyColumns + " property")

// ErrHistoryTable means the table is a history table (PropShape is
// ShapeHistory, ADR 0046), not a current-state table: several rows a key,
// one per version.
var ErrHistoryTable = errors.New("cdctable: the table is a history table (" + PropShape + "=" + ShapeHistory + "), not a current-state table")

// Layout is where a table keeps its key and its metadata columns: the
// fields, by index in its schema, that the engine and manual edits read a
// row's key and stored position from.
type Layout struct {
	Schema *deltalog.StructType
	// KeyNames are the key columns (PropKeyColumns), KeyFields their fields.
	KeyNames  []string
	KeyFields []int
	// PosField, OpField and TimeField hold ColPosition, ColOp and
	// ColCommitTime; DeletedField holds ColDeleted, or is -1 in a table
	// without it (hard deletes).
	PosField, OpField, TimeField, DeletedField int
}

// KeyColumns reads the key columns (PropKeyColumns) of the table of meta,
// or returns an error matching ErrNotCDCTable when it has none.
func KeyColumns(meta deltalog.Metadata) ([]string, error) {
	raw, ok := meta.Configuration[PropKeyColumns]
	if !ok {
		return nil, ErrNotCDCTable
	}
	var keys []string
	if err := json.Unmarshal([]byte(raw), &keys); err != nil || len(keys) == 0 {
		return nil, fmt.Errorf("%w: bad %s %q", ErrNotCDCTable, PropKeyColumns, raw)
	}
	return keys, nil
}

// LayoutOf reads the layout of the table of meta, or returns an error
// matching ErrNotCDCTable for a table cdc2delta does not maintain, or
// ErrHistoryTable for a history table.
func LayoutOf(meta deltalog.Metadata) (Layout, error) {
	if meta.Configuration[PropShape] == ShapeHistory {
		return Layout{}, ErrHistoryTable
	}
	schema, err := deltalog.ParseSchema(meta.SchemaString)
	if err != nil {
		return Layout{}, err
	}
	l := Layout{Schema: schema}
	if l.KeyNames, err = KeyColumns(meta); err != nil {
		return Layout{}, err
	}
	find := func(name string) int {
		for i, f := range schema.Fields {
			if f.Name == name {
				return i
			}
		}
		return -1
	}
	for _, k := range l.KeyNames {
		i := find(k)
		if i < 0 {
			return Layout{}, fmt.Errorf("%w: key column %q missing from schema", ErrNotCDCTable, k)
		}
		l.KeyFields = append(l.KeyFields, i)
	}
	l.PosField, l.OpField, l.TimeField, l.DeletedField = find(ColPosition), find(ColOp), find(ColCommitTime), find(ColDeleted)
	if l.PosField < 0 || l.OpField < 0 || l.TimeField < 0 {
		return Layout{}, fmt.Errorf("%w: metadata columns missing", ErrNotCDCTable)
	}
	return l, nil
}

// AppendRowKey appends the key (AppendKey's encoding) of row, a row aligned
// with the table's schema.
func (l Layout) AppendRowKey(dst []byte, row []any) ([]byte, error) {
	var err error
	for _, f := range l.KeyFields {
		if dst, err = appendKeyValue(dst, row[f]); err != nil {
			return dst, err
		}
	}
	return dst, nil
}
