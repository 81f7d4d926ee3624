package sqlexpr

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

func testSchema() *deltalog.StructType {
	return &deltalog.StructType{Fields: []deltalog.StructField{
		{Name: "id", Type: deltalog.TypeLong},
		{Name: "position", Type: deltalog.TypeInteger, Nullable: true},
		{Name: "points", Type: deltalog.TypeDouble, Nullable: true},
		{Name: "name", Type: deltalog.TypeString, Nullable: true},
		{Name: "Unit Price", Type: deltalog.DecimalType{Precision: 10, Scale: 2}, Nullable: true},
		{Name: "day", Type: deltalog.TypeDate, Nullable: true},
		{Name: "at", Type: deltalog.TypeTimestamp, Nullable: true},
		{Name: "small", Type: deltalog.TypeByte, Nullable: true},
		{Name: "raw", Type: deltalog.TypeBinary, Nullable: true},
		{Name: "ok", Type: deltalog.TypeBoolean, Nullable: true},
	}}
}

func dec(s string) decimal128.Num {
	n, err := decimal128.Parse(s, 10, 2)
	if err != nil {
		panic(err)
	}
	return n
}

func TestPredicates(t *testing.T) {
	// 2024-03-01 is day 19783; 10:00 UTC that day in microseconds.
	row := []any{int64(7), int32(12), 0.5, "Max", dec("12.50"), int32(19783), int64(19783*86400+36000) * 1_000_000, int8(100), []byte{1, 2}, true}
	nulls := []any{int64(8), nil, nil, nil, nil, nil, nil, nil, nil, nil}
	cases := []struct {
		expr      string
		row, null bool
	}{
		{"position > 10", true, false},
		{"NOT position > 10", false, false},
		{"position <= 10", false, false},
		{"position IS NULL", false, true},
		{"position IS NOT NULL AND position > 10", true, false},
		{"position > 10 OR true", true, true},
		{"position > 10 OR position IS NULL", true, true},
		{"position IN (1, 12, NULL)", true, false},
		{"position NOT IN (1, 2, NULL)", false, false},
		{"position NOT IN (1, 2)", true, false},
		{"position BETWEEN 10 AND 12", true, false},
		{"position NOT BETWEEN 10 AND 12", false, false},
		{"name LIKE 'M%'", true, false},
		{"name LIKE 'm%'", false, false},
		{"name ILIKE 'm_x'", true, false},
		{"name NOT LIKE '%a%'", false, false},
		{"`Unit Price` = 12.5", true, false},
		{"`unit price` > 12.49", true, false},
		{"`Unit Price` = '12.50'", true, false},
		{"`Unit Price` * 2 = 25", true, false},
		{"`Unit Price` / 3 > 4.16", true, false},
		{"day = '2024-03-01'", true, false},
		{"day = DATE '2024-03-01'", true, false},
		{"day < at", true, false},
		{"at = TIMESTAMP '2024-03-01 10:00:00'", true, false},
		{"at = '2024-03-01T11:00:00+01:00'", true, false},
		{"small + 27 = 127", true, false},
		{"raw = X'0102'", true, false},
		{"ok", true, false},
		{"ok IS NOT TRUE", false, true},
		{"CASE WHEN position > 10 THEN 'late' ELSE 'early' END = 'late'", true, false},
		{"CASE position WHEN 12 THEN true END", true, false},
		{"COALESCE(position, -1) = -1", false, true},
		{"NULLIF(position, 12) IS NULL", true, true},
		{"position <=> NULL", false, true},
		{"position IS DISTINCT FROM 12", false, true},
		{"11 - position = -1", true, false},
		{"points = 0.5", true, false},
		{"points = 1/2", true, false},
		{"CAST(position AS STRING) = '12'", true, false},
		{"CAST('  12 ' AS INT) = position", true, false},
		{"name || '!' = 'Max!'", true, false},
		{"length(name) = 3 AND lower(name) = 'max' AND upper(name) = 'MAX'", true, false},
		{"abs(-position) = 12", true, false},
		{"id % 4 = 3", true, false},
		{"7 = id", true, false},
		{"`Unit Price` + position = 24.50", true, false},
		{"CAST(`Unit Price` AS INT) = 12", true, false},
		{"CAST(points AS DECIMAL(3,2)) = 0.50", true, false},
		{"NULL", false, false},
		{"'it''s' = 'its' AND 'a\\'b' = \"a'b\"", true, true},
	}
	for _, tc := range cases {
		t.Run(tc.expr, func(t *testing.T) {
			p, err := BindPredicate(tc.expr, testSchema())
			require.NoError(t, err)
			got, err := p.Matches(row)
			require.NoError(t, err)
			require.Equal(t, tc.row, got, "row")
			got, err = p.Matches(nulls)
			require.NoError(t, err)
			require.Equal(t, tc.null, got, "nulls")
		})
	}
}

func TestPredicateErrors(t *testing.T) {
	row := []any{int64(7), int32(0), 0.5, "Max", dec("12.50"), int32(19783), int64(0), int8(100), []byte{1}, true}
	cases := []struct {
		expr string
		kind error
		pos  int
		bind bool // the error comes from binding, not evaluating
	}{
		{"postion > 10", ErrColumn, 0, true},
		{"position >", ErrSyntax, 10, true},
		{"name = 5", ErrType, 7, true},
		{"position = 'ten'", ErrType, 11, true},
		{"position + 1", ErrType, 0, true},
		{"day = '2024-02-30'", ErrType, 6, true},
		{"position & 1 = 1", ErrUnsupported, 9, true},
		{"foo(position)", ErrUnsupported, 0, true},
		{"(position", ErrSyntax, 9, true},
		{"CAST(points AS STRING) = '0.5'", ErrType, 5, true},
		{"name LIKE 'a\\\\b'", ErrType, 10, true},
		{"10 / position > 1", ErrEval, 3, false},
		{"small * small > 0", ErrEval, 6, false},
		{"CAST(name AS INT) = 1", ErrEval, 0, false},
		{"2147483647 + position > 0", ErrSyntax, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.expr, func(t *testing.T) {
			p, err := BindPredicate(tc.expr, testSchema())
			if !tc.bind {
				require.NoError(t, err)
				_, err = p.Matches(row)
			}
			if tc.kind == ErrSyntax && !tc.bind {
				require.NoError(t, err) // 2147483647 + 0 fits
				return
			}
			require.Error(t, err)
			require.ErrorIs(t, err, tc.kind, err.Error())
			var e *Error
			require.True(t, errors.As(err, &e))
			require.Equal(t, tc.pos, e.Pos, err.Error())
		})
	}
}

func TestAssignments(t *testing.T) {
	row := []any{int64(7), int32(3), 0.5, "Max", dec("12.50"), int32(19783), int64(0), int8(100), []byte{1}, true}
	cases := []struct {
		set  string
		want []any
	}{
		{"points = 11 - position", []any{float64(8)}},
		{"position = 11 - position, name = 'x'", []any{int32(8), "x"}},
		{"`Unit Price` = `Unit Price` * 1.1", []any{dec("13.75")}},
		{"`Unit Price` = 1.005", []any{dec("1.01")}},
		{"small = position", []any{int8(3)}},
		{"name = position", []any{"3"}},
		{"name = NULL", []any{nil}},
		{"day = '2024-01-01'", []any{int32(19723)}},
		{"position = points", []any{int32(0)}},
	}
	for _, tc := range cases {
		t.Run(tc.set, func(t *testing.T) {
			ss, err := BindAssignments(tc.set, testSchema(), SetterOptions{})
			require.NoError(t, err)
			var got []any
			for _, s := range ss {
				v, err := s.Value(row)
				require.NoError(t, err)
				got = append(got, v)
			}
			require.Equal(t, tc.want, got)
		})
	}
	_, err := BindAssignments("id = 1", testSchema(), SetterOptions{Protected: map[string]string{"id": "it is a key column"}})
	require.ErrorIs(t, err, ErrColumn)
	_, err = BindAssignments("id = NULL", testSchema(), SetterOptions{})
	require.ErrorIs(t, err, ErrType)
	_, err = BindAssignments("position = name", testSchema(), SetterOptions{})
	require.ErrorIs(t, err, ErrType)
	_, err = BindAssignments("name = 1, NAME = 2", testSchema(), SetterOptions{})
	require.ErrorIs(t, err, ErrColumn)
	ss, err := BindAssignments("small = small * 2", testSchema(), SetterOptions{})
	require.NoError(t, err)
	_, err = ss[0].Value(row)
	require.ErrorIs(t, err, ErrEval)
}

func TestMayMatch(t *testing.T) {
	n := func(s string) any { return json.Number(s) }
	fs := FileStats{
		NumRecords: 10,
		Partition:  map[int]any{3: "Max"},
		Min:        map[int]any{1: n("5"), 4: n("1.50"), 5: "2024-01-01", 6: "2024-03-01T10:00:00.000Z"},
		Max:        map[int]any{1: n("10"), 4: n("99.99"), 5: "2024-01-31", 6: "2024-03-01T10:00:00.000Z"},
		NullCount:  map[int]int64{1: 0, 2: 10, 4: 3},
	}
	cases := []struct {
		expr string
		want bool
	}{
		{"position > 10", false},
		{"position >= 10", true},
		{"position < 5", false},
		{"NOT position > 4", false},
		{"NOT (position > 4 AND position < 11)", false},
		{"position = 7", true},
		{"position = 11 OR position = 4", false},
		{"position IN (1, 2, 11)", false},
		{"position IN (1, 7)", true},
		{"position IS NULL", false},
		{"points IS NULL", true},
		{"points IS NOT NULL", false},
		{"points > 0", false},
		{"name = 'Max'", true},
		{"name = 'Min'", false},
		{"name IS NULL", false},
		{"`Unit Price` > 100", false},
		{"`Unit Price` < 1.5", false},
		{"`Unit Price` IS NULL", true},
		{"day = '2024-02-01'", false},
		{"day BETWEEN '2024-01-15' AND '2024-01-16'", true},
		{"at > '2024-03-01 10:00:00.000998'", true},
		{"at > '2024-03-01 10:00:00.001'", false},
		{"CAST(position AS BIGINT) > 10", false},
		{"position + 0 > 10", true},
		{"position > NULL", false},
		{"id > 0", true},
	}
	for _, tc := range cases {
		t.Run(tc.expr, func(t *testing.T) {
			p, err := BindPredicate(tc.expr, testSchema())
			require.NoError(t, err)
			require.Equal(t, tc.want, p.MayMatch(fs))
		})
	}
}
