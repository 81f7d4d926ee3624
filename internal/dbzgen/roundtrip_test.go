package dbzgen_test

import (
	"bytes"
	"encoding/base64"
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
)

func rat(s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		panic("bad test decimal " + s)
	}
	return r
}

func utc(y int, mo time.Month, d, h, mi, s, ns int) time.Time {
	return time.Date(y, mo, d, h, mi, s, ns, time.UTC)
}

// Decoded values of dbzgen.EveryTypeRow under Debezium's defaults (adaptive,
// precise, bytes), worked out by hand from the brief §4.
func everyTypeAdaptive() map[string]any {
	return map[string]any{
		"id":                 int32(1),
		"c_bit":              true,
		"c_tinyint":          int32(255),
		"c_smallint":         int32(math.MinInt16),
		"c_int":              int32(math.MinInt32),
		"c_bigint":           int64(math.MaxInt64),
		"c_real":             float32(1.5),
		"c_float24":          float32(-0.25),
		"c_float":            math.Pi,
		"c_decimal":          rat("9999999999999999999999999999.9999999999"),
		"c_decimal_int":      rat("-99999999999999999999999999999999999999"),
		"c_numeric":          rat("123456789012345678"),
		"c_numeric_5_5":      rat("-0.00001"),
		"c_money":            rat("-922337203685477.5808"),
		"c_smallmoney":       rat("214748.3647"),
		"c_char":             "ab   ",
		"c_nchar":            "é    ",
		"c_varchar":          "",
		"c_nvarchar":         "日本語",
		"c_varchar_max":      "__debezium_unavailable_value",
		"c_nvarchar_max":     strings.Repeat("x", 300),
		"c_text":             "t",
		"c_ntext":            "nt",
		"c_xml":              "<a/>",
		"c_uniqueidentifier": "6F9619FF-8B86-D011-B42D-00C04FC964FF",
		"c_binary":           []byte{1, 2, 0, 0},
		"c_varbinary":        bytes.Repeat([]byte{0xab}, 16),
		"c_varbinary_max":    []byte("__debezium_unavailable_value"),
		"c_image":            []byte{0xff},
		"c_rowversion":       []byte{0, 0, 0, 0, 0, 0, 0x07, 0xd1},
		"c_geometry":         []byte{0xe6, 0x10},
		"c_geography":        []byte{0xe6, 0x11},
		"c_hierarchyid":      []byte{0x58},
		"c_date":             int32(-719162),            // 0001-01-01
		"c_time0":            int32(37426000),           // rounded to 10:23:46
		"c_time3":            int32(37425679),           // .6789 rounds to .679
		"c_time6":            int64(37425678901),        // µs
		"c_time":             int64(37425678901200),     // ns
		"c_datetime":         int64(1710498645123),      // 37 ticks of 1/300 s → .123
		"c_smalldatetime":    int64(1710498660000),      // rounded up to 10:31
		"c_datetime2_0":      int64(253402300799000),    // 9999-12-31 23:59:59
		"c_datetime2_3":      int64(1710498645123),      // the zone is ignored: wall clock as UTC
		"c_datetime2_6":      int64(-62135596799999999), // 0001-01-01 00:00:00.000001
		"c_datetime2":        nil,                       // beyond NanoTimestamp: null, as Debezium 3.6+
		"c_datetimeoffset3":  "2024-03-15T10:30:45.124-05:30",
		"c_datetimeoffset":   "2024-03-15T10:30:45.1234567+02:00",
		"Unit_Price":         rat("9.99"),
	}
}

func TestEveryTypeRoundTrip(t *testing.T) {
	for _, layout := range []dbzgen.Layout{dbzgen.Layout31, dbzgen.Layout27, dbzgen.Layout26, dbzgen.Layout25} {
		t.Run(layout.String(), func(t *testing.T) {
			opts := dbzgen.DefaultOptions()
			opts.Layout = layout
			h := newHarness(t, opts)
			tab, err := h.gen.Table(dbzgen.EveryType())
			require.NoError(t, err)
			_, has := tab.FieldName("c_sql_variant")
			require.False(t, has, "sql_variant is dropped")

			commit := dbzgen.MakeLSN(0x2b, 0xe10, 5)
			change := dbzgen.MakeLSN(0x2b, 0xe10, 3)
			when := time.UnixMilli(1710498645130).UTC()
			key, value, err := h.gen.Encode(t.Context(), dbzgen.Event{
				Table: tab, Op: dbzgen.OpCreate, After: dbzgen.EveryTypeRow(),
				Source:      dbzgen.Source{Time: when, CommitLSN: commit, ChangeLSN: change, SerialNo: 1},
				ProcessedAt: when.Add(4872 * time.Millisecond),
			})
			require.NoError(t, err)
			require.Equal(t, map[string]any{"id": int32(1)}, h.decode(t, key))

			env := h.decode(t, value)
			require.Nil(t, env["before"])
			after := image(t, env, "after")
			want := everyTypeAdaptive()
			require.Len(t, after, len(want))
			for col, w := range want {
				requireSameValue(t, w, after[col], col)
			}
			require.Equal(t, "c", env["op"])
			src := unwrap(env["source"].(map[string]any))
			require.Equal(t, "sqlserver", src["connector"])
			require.Equal(t, "shop", src["name"])
			require.Equal(t, "sales", src["db"])
			require.Equal(t, "dbo", src["schema"])
			require.Equal(t, "all_types", src["table"])
			require.Equal(t, "false", src["snapshot"])
			require.Equal(t, "0000002b:00000e10:0005", src["commit_lsn"])
			require.Equal(t, "0000002b:00000e10:0003", src["change_lsn"])
			require.Equal(t, int64(1), src["event_serial_no"])
			require.Equal(t, int64(1710498645130), src["ts_ms"])
			require.Equal(t, map[string]any{"long": int64(1710498650002)}, env["ts_ms"])
			if layout != dbzgen.Layout25 {
				require.Equal(t, int64(1710498645130000), src["ts_us"])
				require.Equal(t, map[string]any{"long": int64(1710498650002000000)}, env["ts_ns"])
			} else {
				require.NotContains(t, src, "ts_us")
				require.NotContains(t, env, "ts_us")
			}
		})
	}
}

func requireSameValue(t *testing.T, want, got any, col string) {
	t.Helper()
	if w, ok := want.(*big.Rat); ok {
		g, ok := got.(*big.Rat)
		require.True(t, ok, "%s: got %T", col, got)
		require.Zero(t, w.Cmp(g), "%s: want %s got %s", col, w.RatString(), g.RatString())
		return
	}
	require.Equal(t, want, got, col)
}

// Per-mode values: each case encodes one column of EveryType under non-default
// options and checks the decoded value.
func TestModes(t *testing.T) {
	connect := dbzgen.DefaultOptions()
	connect.TimePrecision = dbzgen.TimeConnect
	micro := dbzgen.DefaultOptions()
	micro.TimePrecision = dbzgen.TimeAdaptiveMicroseconds
	double := dbzgen.DefaultOptions()
	double.DecimalHandling = dbzgen.DecimalDouble
	str := dbzgen.DefaultOptions()
	str.DecimalHandling = dbzgen.DecimalString
	b64 := dbzgen.DefaultOptions()
	b64.BinaryHandling = dbzgen.BinaryBase64
	b64url := dbzgen.DefaultOptions()
	b64url.BinaryHandling = dbzgen.BinaryBase64URLSafe
	hexMode := dbzgen.DefaultOptions()
	hexMode.BinaryHandling = dbzgen.BinaryHex
	clock := 10*time.Hour + 23*time.Minute + 45*time.Second + 678901200

	tests := []struct {
		name   string
		opts   dbzgen.Options
		column string
		in     any
		want   any
	}{
		{"connect date", connect, "c_date", utc(2024, 3, 15, 0, 0, 0, 0), utc(2024, 3, 15, 0, 0, 0, 0)},
		{"connect time(7) truncates to ms", connect, "c_time", clock, 37425678 * time.Millisecond},
		{"connect time(0)", connect, "c_time0", clock, 37426 * time.Second},
		{"connect datetime2(7) truncates to ms", connect, "c_datetime2", utc(2024, 3, 15, 10, 30, 45, 123456789), utc(2024, 3, 15, 10, 30, 45, 123000000)},
		{"connect datetime2(7) year 9999", connect, "c_datetime2", utc(9999, 12, 31, 23, 59, 59, 999999900), utc(9999, 12, 31, 23, 59, 59, 999000000)},
		{"connect datetime", connect, "c_datetime", utc(2024, 3, 15, 10, 30, 45, 2000000), utc(2024, 3, 15, 10, 30, 45, 3000000)},
		{"connect datetimeoffset stays a string", connect, "c_datetimeoffset", utc(2024, 3, 15, 10, 30, 45, 0), "2024-03-15T10:30:45Z"},
		{"adaptive_time_microseconds time(0)", micro, "c_time0", clock, int64(37426000000)},
		{"adaptive_time_microseconds time(7) loses 100ns", micro, "c_time", clock, int64(37425678901)},
		{"adaptive_time_microseconds datetime2(7) stays ns", micro, "c_datetime2", utc(2024, 3, 15, 10, 30, 45, 123456700), int64(1710498645123456700)},
		{"double money", double, "c_money", "9.99", 9.99},
		{"double decimal(38,10)", double, "c_decimal", "1.0000000001", 1.0000000001},
		{"string money padded to scale", str, "c_money", "9.99", "9.9900"},
		{"string negative", str, "c_decimal_int", "-12", "-12"},
		{"string numeric(5,5)", str, "c_numeric_5_5", "-0.00001", "-0.00001"},
		{"base64 binary(4) padded", b64, "c_binary", []byte{0xfb, 0xff}, base64.StdEncoding.EncodeToString([]byte{0xfb, 0xff, 0, 0})},
		{"base64url", b64url, "c_varbinary", []byte{0xfb, 0xff}, "-_8="},
		{"hex lower case", hexMode, "c_image", []byte{0xAB, 0x01}, "ab01"},
		{"hex placeholder", hexMode, "c_varbinary_max", dbzgen.Placeholder{}, "5f5f646562657a69756d5f756e617661696c61626c655f76616c7565"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.opts)
			tab, err := h.gen.Table(dbzgen.EveryType())
			require.NoError(t, err)
			_, value, err := h.gen.Encode(t.Context(), dbzgen.Event{
				Table: tab, Op: dbzgen.OpRead, After: dbzgen.Row{"id": 7, tc.column: tc.in},
				Source: dbzgen.Source{Time: time.UnixMilli(1e12), Snapshot: "true", CommitLSN: dbzgen.MakeLSN(1, 2, 3)},
			})
			require.NoError(t, err)
			env := h.decode(t, value)
			field, _ := tab.FieldName(tc.column)
			requireSameValue(t, tc.want, image(t, env, "after")[field], tc.column)
		})
	}
}

func TestBadValues(t *testing.T) {
	tests := []struct {
		name   string
		column string
		in     any
	}{
		{"tinyint negative", "c_tinyint", -1},
		{"int overflow", "c_int", int64(math.MaxInt32) + 1},
		{"decimal too many digits", "c_numeric_5_5", "0.123456"},
		{"decimal too large", "c_money", "922337203685477.5808"},
		{"decimal not a number", "c_decimal", "abc"},
		{"decimal from float refused", "c_decimal", 1.5},
		{"char too long", "c_char", "abcdef"},
		{"binary too long", "c_binary", []byte{1, 2, 3, 4, 5}},
		{"string for binary", "c_varbinary", "ab"},
		{"bad uuid", "c_uniqueidentifier", "nope"},
		{"duration for datetime", "c_datetime2", time.Second},
		{"time of day beyond 24h", "c_time", 25 * time.Hour},
		{"placeholder in int", "c_int", dbzgen.Placeholder{}},
		{"unknown column", "no_such", 1},
	}
	h := newHarness(t, dbzgen.DefaultOptions())
	tab, err := h.gen.Table(dbzgen.EveryType())
	require.NoError(t, err)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := h.gen.Encode(t.Context(), dbzgen.Event{Table: tab, Op: dbzgen.OpCreate, After: dbzgen.Row{"id": 1, tc.column: tc.in}})
			require.ErrorIs(t, err, dbzgen.ErrBadValue)
		})
	}
	// NOT NULL key column left NULL.
	_, _, err = h.gen.Encode(t.Context(), dbzgen.Event{Table: tab, Op: dbzgen.OpCreate, After: dbzgen.Row{"c_int": 1}})
	require.ErrorIs(t, err, dbzgen.ErrBadValue)
}
