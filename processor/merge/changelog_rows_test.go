package merge

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// logRowOneByOne is the change log row of one record as it was built before
// logColumns shared work across a batch and typed its columns: the
// reference logColumns must equal.
func logRowOneByOne(schema *deltalog.StructType, r *Record) []any {
	c := &r.Change
	row := make([]any, len(schema.Fields))
	var unavailable []string
	if c.Layout != nil {
		for i, f := range schema.Fields[:len(schema.Fields)-cdctable.ChangeLogMetaCount] {
			j := c.Layout.Index(sourceName(f))
			if j < 0 || c.Row == nil {
				continue
			}
			if c.IsUnavailable(j) {
				unavailable = append(unavailable, c.Layout.Columns[j].Name)
				continue
			}
			row[i] = c.Row[j]
		}
	}
	m := row[len(schema.Fields)-cdctable.ChangeLogMetaCount:]
	m[0], m[1] = opValue(c.Op), c.Pos.Hex()
	if text := c.Pos.CommitText(); text != "" {
		m[2] = text
	}
	if text := c.Pos.ChangeText(); text != "" {
		m[3] = text
	}
	if c.Pos.Serial > 0 {
		m[4] = c.Pos.Serial
	}
	if c.CommitMillis > 0 {
		m[5] = c.CommitMillis * 1000
		m[6] = int32(c.CommitMillis / 86_400_000)
	}
	if c.TxID != "" {
		m[7] = c.TxID
	}
	if c.TxOrder > 0 {
		m[8] = c.TxOrder
	}
	if len(unavailable) > 0 {
		m[9] = strings.Join(unavailable, ",")
	}
	m[10], m[11], m[12] = r.Topic, r.Partition, r.Offset
	return row
}

// TestLogColumnsEqualOneByOne: the batch-wise columns equal the
// record-by-record rows, value for value and, read as datafile.Write takes
// the column's type, Go type for Go type, on batches that mix
// layouts (a column added, one missing), SQL Server, PostgreSQL and MySQL
// positions, transactions of several events, snapshot events, unavailable
// columns, truncates, topics, partitions, commit days, absent values and a
// source value of a Go type a typed column does not take.
func TestLogColumnsEqualOneByOne(t *testing.T) {
	wide := &codecs.Layout{SchemaID: 9, Name: itemsLayout.Name, Columns: append(slices.Clone(itemsLayout.Columns), codecs.Column{Name: "extra", Type: kStr, Nullable: true})}
	narrow := &codecs.Layout{SchemaID: 11, Name: itemsLayout.Name, Columns: slices.Clone(itemsLayout.Columns[:2])}
	schema := &deltalog.StructType{}
	for _, col := range wide.Columns {
		schema.Fields = append(schema.Fields, sourceField(col, col.Name, true))
	}
	schema.Fields = append(schema.Fields, cdctable.ChangeLogMetaFields()...)

	rng := rand.New(rand.NewPCG(5, 6))
	var commit codecs.LSN
	for round := range 20 {
		var recs []Record
		for i := range 500 {
			if rng.IntN(4) == 0 || i == 0 {
				// A new transaction.
				for j := range commit {
					commit[j] = byte(rng.Uint32())
				}
				switch rng.IntN(4) {
				case 0:
					commit = codecs.LSN{}
				case 1:
					commit[0] = 0xf1 // PostgreSQL
					if rng.IntN(3) == 0 {
						commit = codecs.LSN{0xf1}
					}
				case 2:
					commit[0] = 0xf2 // MySQL
				}
			}
			e := ev{op: []codecs.Op{opC, opU, opD, codecs.OpRead}[rng.IntN(4)], id: int32(i), pos: i, name: "n" + strings.Repeat("x", rng.IntN(3)),
				price: int64(i), notes: "notes", unavailable: rng.IntN(5) == 0, part: int32(rng.IntN(3)), offset: int64(round*1000 + i)}
			r := e.record()
			c := &r.Change
			c.Pos.Commit = commit
			if rng.IntN(6) == 0 {
				c.Pos.Change, c.Pos.Serial = codecs.LSN{}, 0
			} else {
				c.Pos.Change[9], c.Pos.Serial = byte(i), int64(rng.IntN(400))
			}
			if rng.IntN(5) == 0 {
				c.CommitMillis = 0
			} else {
				c.CommitMillis = 1_700_000_000_000 + int64(rng.IntN(3))*86_400_000 + int64(rng.IntN(1000))
			}
			if rng.IntN(2) == 0 {
				c.TxID, c.TxOrder = "tx"+string(rune('a'+rng.IntN(5))), int64(rng.IntN(300))
			}
			if rng.IntN(3) == 0 {
				r.Topic = "sales.dbo.other"
			}
			switch rng.IntN(8) {
			case 0:
				c.Layout = wide
				c.Row = append(c.Row, "extra")
				if round%2 == 1 && i%7 == 0 {
					// A Go type the typed column does not take: the column
					// stays values.
					c.Row[len(c.Row)-1] = []byte("extra")
				}
			case 1:
				c.Layout, c.Row = narrow, c.Row[:2]
				c.Unavailable = nil
			case 2:
				c.Op, c.Layout, c.Row, c.Unavailable = codecs.OpTruncate, nil, nil, nil
			case 3:
				c.Row = nil
			}
			recs = append(recs, r)
		}
		ptrs := make([]*Record, len(recs))
		for i := range recs {
			ptrs[i] = &recs[i]
		}
		got := logColumns(schema, ptrs)
		require.Len(t, got, len(schema.Fields))
		for j, c := range got {
			require.Equal(t, len(recs), c.Len(), "column %s", schema.Fields[j].Name)
		}
		for i := range recs {
			want := logRowOneByOne(schema, &recs[i])
			require.Len(t, want, len(got))
			for j := range want {
				cell := cellOf(t, &got[j], schema.Fields[j].Type, i)
				require.IsType(t, want[j], cell, "row %d column %s", i, schema.Fields[j].Name)
				require.Equal(t, want[j], cell, "row %d column %s", i, schema.Fields[j].Name)
			}
		}
	}
}

// cellOf is row i of c as the Go value a row of datafile.Write would hold
// for type t.
func cellOf(t *testing.T, c *datafile.Column, typ deltalog.Type, i int) any {
	switch {
	case c.Null != nil && c.Null[i]:
		return nil
	case c.Strs != nil:
		return c.Strs[i]
	case c.Ints != nil:
		switch typ {
		case deltalog.TypeByte:
			return int8(c.Ints[i])
		case deltalog.TypeShort:
			return int16(c.Ints[i])
		case deltalog.TypeInteger, deltalog.TypeDate:
			return int32(c.Ints[i])
		case deltalog.TypeLong, deltalog.TypeTimestampNTZ:
			return c.Ints[i]
		}
		t.Fatalf("integers for a column of type %s", typ)
	}
	return c.Values[i]
}
