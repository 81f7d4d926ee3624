//go:build integration

package tableops_test

import (
	"math"
	"time"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// semanticsCase probes where a hand-written evaluator parts from Spark SQL 4 (ANSI
// mode), each predicate written so that the old answer picks another row or fails:
//   - a string literal beside a SMALLINT or INT is a BIGINT (s = '100000' is FALSE, not
//     an overflow) and beside a DECIMAL a DOUBLE (dec = '12.345' is FALSE, not 12.35);
//   - FLOAT beside an integer is DOUBLE (f = 16777217 is FALSE for 16777216f) and
//     f * 3 is a DOUBLE;
//   - a FLOAT goes to a DECIMAL through its DOUBLE text (0.1f is 0.1000000015);
//   - div is integral division to BIGINT, truncated toward zero;
//   - a TIMESTAMP_NTZ text ignores its zone; a decimal casts to a plain string;
//   - NaN equals 'NaN' and is above every number; -0.0 = 0; '1.5d' casts to 1.5;
//   - -2147483648 is an INT literal; NULLIF keeps its first argument's type; a DOUBLE
//     of 2^63 casts to the largest BIGINT;
//   - a timestamp's zone is read as Java's ZoneId.of reads it (UTC+2, PST);
//   - a string literal in arithmetic is typed as in a comparison (i + '1');
//   - past precision 38 the common decimal keeps the integral digits (1 = 0.6 as
//     DECIMAL(38,0)).
//
// No change data feed: the deleted NaN row's preimage would not survive JSON.
func semanticsCase() oracleCase {
	f := func(name string, t deltalog.Type) deltalog.StructField {
		return deltalog.StructField{Name: name, Type: t, Nullable: true}
	}
	schema := &deltalog.StructType{Fields: []deltalog.StructField{
		{Name: "id", Type: deltalog.TypeLong},
		f("f", deltalog.TypeFloat), f("s", deltalog.TypeShort), f("i", deltalog.TypeInteger),
		f("dec", deltalog.DecimalType{Precision: 10, Scale: 2}), f("big", deltalog.DecimalType{Precision: 38, Scale: 10}),
		f("d", deltalog.TypeDouble), f("ntz", deltalog.TypeTimestampNTZ), f("str", deltalog.TypeString), f("l", deltalog.TypeLong),
		f("ts", deltalog.TypeTimestamp),
	}}
	us := func(s string) int64 {
		t, err := time.Parse("2006-01-02 15:04:05", s)
		if err != nil {
			panic(err)
		}
		return t.UnixMicro()
	}
	r := func(id int64, fl float32, s int16, i int32, dec, big string, d float64, ntz, str string, l int64, ts string) []any {
		return []any{id, fl, s, i, d102(dec), d3810(big), d, us(ntz), str, l, us(ts)}
	}
	return oracleCase{
		name: "Spark semantics: literal typing, FLOAT widening, div, NaN, zones", duckdb: true,
		table: dmlTable{schema: schema, dv: true, files: [][][]any{
			{
				r(1, 16777216, 32000, 5, "1.00", "0", 1, "2024-07-04 12:00:00", "a", 7, "2024-01-01 00:00:00"),
				r(2, 0.1, -5, -7, "12.34", "1", 2, "2024-01-01 00:00:00", "a ", -7, "2024-07-04 12:00:00"),
			},
			{
				r(3, 2.5, 100, 0, "-1.01", "2", math.NaN(), "2024-02-01 00:00:00", "b", 0, "2024-01-01 00:00:00"),
				r(4, 1.5, 7, 1, "12.35", "3", math.Copysign(0, -1), "2024-03-01 00:00:00", "c", 1, "2024-01-01 00:00:00"),
				{int64(5), nil, nil, nil, nil, nil, nil, nil, nil, nil, nil},
			},
		}},
		stmts: []stmt{
			// Row 2 only.
			{set: []string{"big = f", "d = f * 3", "l = l div 2"},
				where: "i IN ('-7', '3000000000') OR s = '100000' OR f = 16777217 OR dec = '12.345'"},
			// Rows 1, 2 and 4.
			{set: []string{"str = concat(str, '/', CAST(big AS STRING), '/', CAST(7.5 div 2 AS STRING))", "ntz = '2024-12-31 23:00:00-05:00'", "ts = '2024-07-04 12:00:00 PST'"},
				where: "ntz = TIMESTAMP_NTZ '2024-07-04 12:00:00Z' OR dec > '12.349' OR ts = '2024-07-04 14:00:00 UTC+2'"},
			// Row 3.
			{where: "d = 'NaN' AND d > 1e308"},
			// Row 4.
			{set: []string{"d = -d", "f = f * 2", "i = -2147483648", "s = s div 2", "str = NULLIF(i, 5.5)", "l = CAST(9.2233720368547758E18 AS BIGINT)"},
				where: "d = 0 AND CAST(' 1.5d ' AS DOUBLE) = f AND -7 div 2 = -3 AND i + '1' = 2 AND CAST(l AS DECIMAL(38,0)) = CAST(0.6 AS DECIMAL(38,10))"},
		},
	}
}

// semanticsErrors are statements on semanticsCase's table that Spark refuses (at
// analysis or on a row), each of which we must refuse too, leaving the table alone.
// Few, as each costs a Spark statement; the unit tests of sqlexpr hold more.
func semanticsErrors() []stmt {
	return []stmt{
		{set: []string{"s = s * 2"}, where: "id = 1"},        // 64000 into a SMALLINT
		{set: []string{"i = '3000000000'"}, where: "id = 1"}, // not an INT
		{where: "i * '1.5' = 0"},                             // '1.5' is not a BIGINT
		{where: "l div 0 = 1"},                               // DIVIDE_BY_ZERO
		{where: "f div 1 = 0"},                               // div of a FLOAT
		{where: "ntz = '2024-07-04 12:00:00 z'"},             // Java's zone ids are case-sensitive
	}
}
