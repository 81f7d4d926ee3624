package sqlexpr

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

// The answers below are Spark 4.1's (ANSI mode, session time zone UTC), each from
// SELECT or UPDATE on the same values; the comments say what we answered before.

func semanticsSchema() *deltalog.StructType {
	f := func(name string, t deltalog.Type) deltalog.StructField {
		return deltalog.StructField{Name: name, Type: t, Nullable: true}
	}
	return &deltalog.StructType{Fields: []deltalog.StructField{
		f("f", deltalog.TypeFloat), f("s", deltalog.TypeShort), f("i", deltalog.TypeInteger),
		f("dec", deltalog.DecimalType{Precision: 10, Scale: 2}), f("big", deltalog.DecimalType{Precision: 38, Scale: 10}),
		f("ntz", deltalog.TypeTimestampNTZ), f("str", deltalog.TypeString), f("l", deltalog.TypeLong), f("d", deltalog.TypeDouble),
	}}
}

func semanticsRow() []any {
	ntz := time.Date(2024, 7, 4, 12, 0, 0, 0, time.UTC)
	return []any{float32(0.1), int16(32000), int32(5), dec("12.35"), decimal128.Num{}, ntz, "a", int64(7), math.NaN()}
}

func TestSparkSemanticsPredicates(t *testing.T) {
	cases := []struct {
		expr string
		want any // the row's answer, or the error kind
	}{
		// A string literal beside an integral type is a BIGINT, beside a decimal or a
		// float a DOUBLE (before: read as the column's own type).
		{"s = '100000'", false},                 // before: ErrType, 100000 overflows SMALLINT
		{"i IN ('5', '3000000000')", true},      // before: ErrType
		{"COALESCE(i, '3000000000') = 5", true}, // before: ErrType
		{"dec = '12.345'", false},               // before: true, '12.345' rounded to 12.35
		{"dec > '12.349'", true},                // before: false
		{"f = '0.1'", false},                    // before: true, '0.1' read as a FLOAT
		{"i = '5.0'", ErrType},                  // Spark: CAST_INVALID_INPUT to BIGINT
		// FLOAT beside any other number is DOUBLE.
		{"f * 3 = 0.30000000447034836D", true}, // before: false, f * 3 was a FLOAT
		{"f = 0.10000000149011612D", true},
		{"CAST(16777216 AS FLOAT) = 16777217", false}, // before: true
		{"CAST(16777216 AS FLOAT) = CAST(16777217 AS FLOAT)", true},
		// A FLOAT goes to a decimal through its DOUBLE text.
		{"CAST(f AS DECIMAL(20,10)) = 0.1000000015", true}, // before: 0.1000000000
		// A TIMESTAMP_NTZ text's zone is checked and ignored.
		{"ntz = '2024-07-04 12:00:00+02:00'", true}, // before: ErrType
		{"ntz = TIMESTAMP_NTZ '2024-07-04 12:00:00Z'", true},
		{"ntz = '2024-07-04 12:00:00 Europe/Paris'", true},
		{"ntz = '2024-07-04 12:00:00 bogus'", ErrType},
		// Java's Double.parseDouble, after Spark's own inf and nan.
		{"CAST(' 1.5d ' AS DOUBLE) = 1.5", true}, // before: ErrEval
		{"CAST('1.5F' AS FLOAT) = 1.5", true},
		{"CAST('0x1p3' AS DOUBLE) = 8", true},
		{"CAST('nAn' AS DOUBLE) = d", true},
		{"CAST('1_0' AS DOUBLE) = 10", ErrEval},
		{"CAST('+nan' AS DOUBLE) = d", ErrEval},
		{"CAST('0x10' AS DOUBLE) = 16", ErrEval},
		// Decimals cast to plain text.
		{"CAST(CAST(0.0000001 AS DECIMAL(10,8)) AS STRING) = '0.00000010'", true}, // before: ErrEval
		{"CAST(big AS STRING) = '0.0000000000'", true},
		// -2147483648 is one INT literal (before: a BIGINT, so no overflow).
		{"abs(-2147483648) > 0", ErrEval},
		{"-2147483648 - 1 < 0", ErrEval},
		{"-2147483648 = -2147483648L", true},
		// div: BIGINT, truncated toward zero; integers or decimals only (before: ErrUnsupported).
		{"7 div 2 = 3", true},
		{"-7 div 2 = -3", true},
		{"7.5 div 0.5 = 15", true},
		{"-1.0 div 0.3 = -3", true},
		{"dec div 5 = 2", true},
		{"s div 3 = 10666", true},
		{"NULL div 2 IS NULL", true},
		{"7 div 0 = 0", ErrEval},
		{"-9223372036854775808 div -1 = 0", ErrEval},
		{"1.5D div 1 = 1", ErrType},
		{"f div 1 = 0", ErrType},
		// NaN equals NaN and is above every number.
		{"d = d AND d > 1e308 AND d = 'NaN'", true},
		{"i % 0 = 0", ErrEval},
		{"concat() = ''", true}, // before: ErrType
		// 2^63 passes Spark's bound check and saturates (before: CAST_OVERFLOW).
		{"CAST(9.2233720368547758E18 AS BIGINT) = 9223372036854775807", true},
		{"CAST(1e19 AS BIGINT) = 0", ErrEval},
		// Past precision 38 the common decimal keeps the integral digits (before:
		// DECIMAL(38,6), so 0.6 stayed 0.6).
		{"CAST(1 AS DECIMAL(38,0)) = CAST(0.6 AS DECIMAL(38,10))", true},
		{"CAST(1 AS DECIMAL(38,0)) IN (CAST(0.6 AS DECIMAL(38,10)))", true},
		// An integral literal beside a decimal has only its own digits.
		{"CAST(0.000000000000000000000000000001 AS DECIMAL(38,30)) = 0", false}, // before: true
		{"CAST(0.000000000000000000000000000001 AS DECIMAL(38,30)) = CAST(0 AS INT)", true},
		// A string literal in arithmetic (before: ErrType).
		{"i + ' 5 ' = 10", true},
		{"'7' - i = 2", true},
		{"s + '1000' = 33000", true},
		{"dec + '1.5' = 13.85D", true},
		{"-'5' = -5.0D", true},
		{"abs('-5.5') = 5.5D", true},
		{"i * '1.5' = 7.5", ErrType}, // Spark: '1.5' is not a BIGINT
		{"'5' + '5' = 10", ErrType},
	}
	for _, tc := range cases {
		t.Run(tc.expr, func(t *testing.T) {
			p, err := BindPredicate(tc.expr, semanticsSchema())
			if kind, ok := tc.want.(error); ok && kind != ErrEval {
				require.ErrorIs(t, err, kind)
				return
			}
			require.NoError(t, err)
			got, err := p.Matches(semanticsRow())
			if kind, ok := tc.want.(error); ok {
				require.ErrorIs(t, err, kind)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestSparkSemanticsAssignments(t *testing.T) {
	ntz := func(s string) int64 {
		v, err := time.Parse("2006-01-02 15:04:05", s)
		require.NoError(t, err)
		return v.UnixMicro()
	}
	big := func(s string) decimal128.Num {
		n, err := decimal128.Parse(s, 38, 10)
		require.NoError(t, err)
		return n
	}
	cases := []struct {
		set  string
		want any
	}{
		{"big = f", big("0.1000000015")}, // before: 0.1000000000
		{"dec = f", dec("0.10")},
		{"d = f * 3", 0.30000000447034836}, // before: 0.30000001192092896
		{"l = l div 2", int64(3)},          // before: ErrUnsupported
		{"l = -7 div 2", int64(-3)},
		{"ntz = '2024-12-31 23:00:00-05:00'", ntz("2024-12-31 23:00:00")}, // before: ErrType
		{"str = CAST(0.00000010 AS DECIMAL(10,8))", "0.00000010"},         // before: ErrEval
		{"str = concat(str, CAST(big AS STRING))", "a0.0000000000"},
		{"i = -2147483648", int32(math.MinInt32)},
		{"f = 16777217", float32(16777216)},
		{"i = '5'", int32(5)}, // store assignment reads the literal as the column's type
		{"i = '3000000000'", ErrType},
		{"i = -2147483648 - 1", ErrEval},
		{"str = NULLIF(i, 5.5)", "5"}, // NULLIF keeps its first type (before: "5.0")
		{"str = NULLIF('5', i)", nil}, // a STRING, NULL as i = 5
	}
	for _, tc := range cases {
		t.Run(tc.set, func(t *testing.T) {
			ss, err := BindAssignments(tc.set, semanticsSchema(), SetterOptions{})
			if kind, ok := tc.want.(error); ok && kind != ErrEval {
				require.ErrorIs(t, err, kind)
				return
			}
			require.NoError(t, err)
			got, err := ss[0].Value(semanticsRow())
			if kind, ok := tc.want.(error); ok {
				require.ErrorIs(t, err, kind)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestSparkDatetimeText(t *testing.T) {
	// want is Spark's CAST(CAST(text AS TIMESTAMP) AS STRING) in UTC; "" when Spark
	// refuses the text.
	timestamps := []struct{ text, want string }{
		{"2024-07-04T12", "2024-07-04 12:00:00"}, // before: refused
		{"2024-07-04 1:2", "2024-07-04 01:02:00"},
		{"2024-07-04 12:00:00.", "2024-07-04 12:00:00"}, // before: refused
		{"2024-07-04 12:00:00.123456789+01:00", "2024-07-04 11:00:00.123456"},
		{"2024-07-04 14:00:00 UTC+2", "2024-07-04 12:00:00"},     // before: refused
		{"2024-07-04 14:00:00 GMT+02:00", "2024-07-04 12:00:00"}, // before: refused
		{"2024-07-04 14:00:00+02:00:00", "2024-07-04 12:00:00"},  // before: refused
		{"2024-07-04 12:00:00 UTC+02:5", "2024-07-04 09:55:00"},
		{"2024-07-04 12:00:00+2:30", "2024-07-04 09:30:00"},
		{"2024-07-04 12:00:00+023000", "2024-07-04 09:30:00"},
		{"2024-07-04 12:00:00 +18:00", "2024-07-03 18:00:00"},
		{"2024-07-04 12:00:00UTC", "2024-07-04 12:00:00"},
		{"2024-07-04 12:00:00 PST", "2024-07-04 19:00:00"}, // before: refused
		{"2024-07-04 12:00:00 EST", "2024-07-04 17:00:00"},
		{"2024-07-04 12:00:00 IST", "2024-07-04 06:30:00"},
		{"2024-07-04 12:00:00 CET", "2024-07-04 10:00:00"},
		{"2024-07-04 12:00:00 Etc/GMT+2", "2024-07-04 14:00:00"},
		{"2024-07-04 12:00:00 z", ""}, // before: read as Z
		{"2024-07-04 12:00:00 utc", ""},
		{"2024-07-04 12:00:00 Local", ""},
		{"2024-07-04 12:00:00 Europe/paris", ""},
		{"2024-07-04 12:00:00 +18:01", ""},
		{"2024-07-04 12:00:00 UTC+25", ""},
		{"2024-07-04T12:00Z", ""},
		{"2024-07-04 12.5", ""},
		{"2024-07-04 12:30.5", ""},
		{"2024-07-04 12:", ""},
		{"2024-07-04 12:00:60", ""},
		{"2024-07-04 24:00:00", ""},
	}
	for _, tc := range timestamps {
		us, ok := parseTimestamp(tc.text, false)
		got := ""
		if ok {
			got, _ = formatTimestamp(us)
		}
		require.Equal(t, tc.want, got, tc.text)
	}
	// want is Spark's CAST(CAST(text AS DATE) AS STRING), without the + Spark puts
	// before a year above 9999.
	dates := []struct{ text, want string }{
		{"0000-01-01", "0000-01-01"}, // before: refused
		{"+2024-07-04", "2024-07-04"},
		{"-0001-01-01", "-0001-01-01"},
		{"12024-07-04", "12024-07-04"},
		{"2024-1-5", "2024-01-05"},
		{" 2024-01-05T10:00", "2024-01-05"},
		{"024-07-04", ""},
		{"12345678-07-04", ""},
		{"2024-02-30", ""},
	}
	for _, tc := range dates {
		days, ok := parseDate(tc.text)
		got := ""
		if ok {
			d := time.Unix(days*86400, 0).UTC()
			got = fmt.Sprintf("%04d-%02d-%02d", d.Year(), d.Month(), d.Day())
			if d.Year() < 0 {
				got = fmt.Sprintf("-%04d-%02d-%02d", -d.Year(), d.Month(), d.Day())
			}
		}
		require.Equal(t, tc.want, got, tc.text)
	}
}
