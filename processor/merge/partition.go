package merge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// Partitioned tables: metaData.partitionColumns holds the source column
// names (logical names; under column mapping the files' partitionValues are
// keyed by physical names, which datafile handles). A data file belongs to
// one partition, so deletion vectors and copy-on-write rewrites stay per
// file; a row whose partition column changes is deleted from its old file
// and written to its new partition like any update.

// ErrPartition means a table cannot be partitioned as configured; errors.As
// a *PartitionError for the details. It stops the table (it is an ErrSchema).
var ErrPartition = errors.New("merge: cannot partition the table by the configured columns")

// PartitionError names a partition_by column a new table cannot use.
type PartitionError struct {
	Table  string
	Column string
	// Reason says why the column cannot partition the table.
	Reason string
	// Accepted are the source columns that could.
	Accepted []string
}

func (e *PartitionError) Error() string {
	acc := "none"
	if len(e.Accepted) > 0 {
		acc = strings.Join(e.Accepted, ", ")
	}
	return fmt.Sprintf("table %s: partition_by column %q %s; columns it accepts: %s", e.Table, e.Column, e.Reason, acc)
}

// Unwrap returns ErrPartition and ErrSchema, so the table stops rather than retries.
func (e *PartitionError) Unwrap() []error { return []error{ErrPartition, ErrSchema} }

// partitionable reports whether a source type can be a partition column.
// Binary values have no portable text form, and floating-point values make
// poor partitions (NaN, -0, rounding in the text form).
func partitionable(t codecs.Type) bool {
	switch t.Kind {
	case codecs.KindBinary, codecs.KindFloat, codecs.KindDouble, codecs.KindInvalid:
		return false
	}
	return true
}

// partitionColumns resolves the configured partition columns against the
// source columns of a new table (names compare case-insensitively, as Delta's
// do) and returns them spelled as the source spells them.
func partitionColumns(table string, want []string, cols []codecs.Column) ([]string, error) {
	var accepted []string
	for _, c := range cols {
		if partitionable(c.Type) {
			accepted = append(accepted, c.Name)
		}
	}
	out := make([]string, 0, len(want))
	for _, w := range want {
		i := slices.IndexFunc(cols, func(c codecs.Column) bool { return c.Name == w })
		if i < 0 {
			i = slices.IndexFunc(cols, func(c codecs.Column) bool { return strings.EqualFold(c.Name, w) })
		}
		if i < 0 { // the name a portable table gives the column
			i = slices.IndexFunc(cols, func(c codecs.Column) bool { return strings.EqualFold(PortableName(c.Name), w) })
		}
		switch {
		case cdctable.IsMetaColumn(w) || i < 0:
			return nil, &PartitionError{Table: table, Column: w, Reason: "is not a column of the source table", Accepted: accepted}
		case !partitionable(cols[i].Type):
			return nil, &PartitionError{Table: table, Column: w, Reason: "has type " + cols[i].Type.String() + ", which cannot partition a table", Accepted: accepted}
		case slices.Contains(out, cols[i].Name):
			return nil, &PartitionError{Table: table, Column: w, Reason: "is listed twice", Accepted: accepted}
		}
		out = append(out, cols[i].Name)
	}
	if len(out) == len(cols) && len(out) > 0 {
		// Unreachable today (metadata columns are always data), kept for clarity.
		return nil, &PartitionError{Table: table, Column: out[0], Reason: "leaves no data column", Accepted: accepted}
	}
	return out, nil
}

// emptyPartitionNull returns, per key column, whether it is a string
// partition column: Delta stores an empty string partition value as null, so
// such a key reads back as null and its event key must encode alike.
func emptyPartitionNull(st *tableState) []bool {
	if len(st.meta.PartitionColumns) == 0 {
		return nil
	}
	out := make([]bool, len(st.KeyFields))
	for k, f := range st.KeyFields {
		fd := st.Schema.Fields[f]
		out[k] = fd.Type == deltalog.TypeString && slices.Contains(st.meta.PartitionColumns, fd.Name)
	}
	return out
}

// partitionGroups splits row indices by their partition values, in order of
// first appearance; an unpartitioned table has one group.
func partitionGroups(st *tableState, rows [][]any) ([][]int, error) {
	var fields []int
	for _, name := range st.meta.PartitionColumns {
		i := slices.IndexFunc(st.Schema.Fields, func(f deltalog.StructField) bool { return strings.EqualFold(f.Name, name) })
		if i < 0 {
			return nil, fmt.Errorf("partition column %q not in the table schema: %w", name, ErrPartition)
		}
		fields = append(fields, i)
	}
	if len(fields) == 0 {
		all := make([]int, len(rows))
		for i := range all {
			all[i] = i
		}
		return [][]int{all}, nil
	}
	var groups [][]int
	seen := map[string]int{}
	var key []byte
	for i, r := range rows {
		key = key[:0]
		for _, f := range fields {
			v, err := datafile.PartitionValue(st.Schema.Fields[f].Type, r[f])
			if err != nil {
				return nil, fmt.Errorf("row %d, partition column %s: %w", i, st.Schema.Fields[f].Name, err)
			}
			if v == nil {
				key = append(key, 0)
				continue
			}
			key = strconv.AppendInt(append(key, 1), int64(len(*v)), 10)
			key = append(append(key, ':'), *v...)
		}
		g, ok := seen[string(key)]
		if !ok {
			g = len(groups)
			seen[string(key)] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	return groups, nil
}

// writeRows writes rows as new data files, one partition at a time, and
// returns the adds and, for each row of the adds in order, its index in
// rows. Each partition gets a fresh datafile.Writer: files from a reused
// Writer's second Write lack the column chunks' path_in_schema, which Spark
// (parquet-mr) cannot read.
func (s *Sink) writeRows(ctx context.Context, st *tableState, rows [][]any) ([]deltalog.Add, []int, error) {
	groups, err := partitionGroups(st, rows)
	if err != nil {
		return nil, nil, fmt.Errorf("table %s: %w", s.opts.TableName, err)
	}
	var adds []deltalog.Add
	order := make([]int, 0, len(rows))
	part := make([][]any, 0, len(rows))
	for _, g := range groups {
		w, err := s.newWriter(st)
		if err != nil {
			return nil, nil, err
		}
		part = part[:0]
		for _, i := range g {
			part = append(part, rows[i])
		}
		a, err := w.Write(ctx, s.opts.Store, part)
		if err != nil {
			return nil, nil, err
		}
		adds = append(adds, a...)
		order = append(order, g...)
	}
	return adds, order, nil
}

// samePartitioning compares a table's partition columns with configured ones
// as Delta names compare; a configured source name matches its portable name.
func samePartitioning(table, config []string) bool {
	return slices.EqualFunc(table, config, func(t, c string) bool {
		return strings.EqualFold(t, c) || strings.EqualFold(t, PortableName(c))
	})
}
