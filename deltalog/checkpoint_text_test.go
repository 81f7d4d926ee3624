package deltalog_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/deltatext"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

// textCase is one value in both of its typed forms: the Go value datafile
// writes, and the Parquet value a checkpoint's _parsed column holds. partition
// and stats are golden texts written by hand from the protocol (§2.9, §2.10);
// stats "" means no bound is kept. The writer keeps none for booleans (Spark's
// rule), while the checkpoint reader re-encodes what a foreign writer stored.
type textCase struct {
	name      string
	typ       deltalog.Type
	goVal     any
	pqType    parquet.Type
	pqVal     parquet.Value
	partition string
	stats     string
}

func textCases() []textCase {
	tsUTC := parquet.TimestampAdjusted(parquet.Microsecond, true).Type()
	tsNTZ := parquet.TimestampAdjusted(parquet.Microsecond, false).Type()
	date := parquet.Date().Type()
	dec := func(n decimal128.Num, p, s int) (parquet.Type, parquet.Value) {
		return parquet.Decimal(s, p, parquet.FixedLenByteArrayType(16)).Type(),
			parquet.FixedLenByteArrayValue(n.AppendBytes(nil, 16))
	}
	d38s0, d38s0v := dec(mustDecimal("-99999999999999999999999999999999999999", 38, 0), 38, 0)
	d38s38, d38s38v := dec(mustDecimal("-0.00000000000000000000000000000000000001", 38, 38), 38, 38)
	d10s2 := parquet.Decimal(2, 10, parquet.Int64Type).Type()
	return []textCase{
		{"date epoch", deltalog.TypeDate, int32(0), date, parquet.Int32Value(0), "1970-01-01", `"1970-01-01"`},
		{"date protocol", deltalog.TypeDate, int32(18878), date, parquet.Int32Value(18878), "2021-09-08", `"2021-09-08"`},
		{"date year 1", deltalog.TypeDate, int32(-719162), date, parquet.Int32Value(-719162), "0001-01-01", `"0001-01-01"`},
		{"date year 9999", deltalog.TypeDate, int32(2932896), date, parquet.Int32Value(2932896), "9999-12-31", `"9999-12-31"`},
		{"timestamp micros", deltalog.TypeTimestamp, int64(1631099471123456), tsUTC, parquet.Int64Value(1631099471123456),
			"2021-09-08T11:11:11.123456Z", `"2021-09-08T11:11:11.123Z"`},
		{"timestamp before 1970", deltalog.TypeTimestamp, int64(-1), tsUTC, parquet.Int64Value(-1),
			"1969-12-31T23:59:59.999999Z", `"1969-12-31T23:59:59.999Z"`},
		{"timestamp year 1", deltalog.TypeTimestamp, int64(-62135596800000000), tsUTC, parquet.Int64Value(-62135596800000000),
			"0001-01-01T00:00:00.000000Z", `"0001-01-01T00:00:00.000Z"`},
		{"timestamp_ntz", deltalog.TypeTimestampNTZ, int64(1637202600123000), tsNTZ, parquet.Int64Value(1637202600123000),
			"2021-11-18 02:30:00.123000", `"2021-11-18T02:30:00.123"`},
		{"timestamp_ntz year 9999", deltalog.TypeTimestampNTZ, int64(253402300799999000), tsNTZ, parquet.Int64Value(253402300799999000),
			"9999-12-31 23:59:59.999000", `"9999-12-31T23:59:59.999"`},
		{"decimal negative", deltalog.DecimalType{Precision: 10, Scale: 2}, decimal128.FromInt64(-1230), d10s2, parquet.Int64Value(-1230), "-12.30", "-12.30"},
		{"decimal below one", deltalog.DecimalType{Precision: 10, Scale: 2}, decimal128.FromInt64(5), d10s2, parquet.Int64Value(5), "0.05", "0.05"},
		{"decimal scale 0", deltalog.DecimalType{Precision: 38, Scale: 0}, mustDecimal("-99999999999999999999999999999999999999", 38, 0), d38s0, d38s0v,
			"-99999999999999999999999999999999999999", "-99999999999999999999999999999999999999"},
		{"decimal scale 38", deltalog.DecimalType{Precision: 38, Scale: 38}, mustDecimal("-0.00000000000000000000000000000000000001", 38, 38), d38s38, d38s38v,
			"-0.00000000000000000000000000000000000001", "-0.00000000000000000000000000000000000001"},
		{"double whole", deltalog.TypeDouble, float64(1), parquet.DoubleType, parquet.DoubleValue(1), "1.0", "1"},
		{"double fraction", deltalog.TypeDouble, -0.5, parquet.DoubleType, parquet.DoubleValue(-0.5), "-0.5", "-0.5"},
		{"double infinity", deltalog.TypeDouble, math.Inf(1), parquet.DoubleType, parquet.DoubleValue(math.Inf(1)), "Infinity", ""},
		{"float", deltalog.TypeFloat, float32(2), parquet.FloatType, parquet.FloatValue(2), "2.0", "2"},
		{"long", deltalog.TypeLong, int64(-42), parquet.Int64Type, parquet.Int64Value(-42), "-42", "-42"},
		{"boolean", deltalog.TypeBoolean, true, parquet.BooleanType, parquet.BooleanValue(true), "true", "true"},
		{"string", deltalog.TypeString, "a<b&c", parquet.String().Type(), parquet.ByteArrayValue([]byte("a<b&c")), "a<b&c", `"a<b&c"`},
	}
}

// The writer and the checkpoint reader give one value the same text, and that
// text is the protocol's.
func TestValueTextWriterMatchesCheckpointReader(t *testing.T) {
	for _, c := range textCases() {
		t.Run(c.name, func(t *testing.T) {
			written, err := datafile.PartitionValue(c.typ, c.goVal)
			require.NoError(t, err)
			require.NotNil(t, written)
			require.Equal(t, c.partition, *written, "datafile partition value")
			parsed, err := datafile.ParsePartitionValue(c.typ, written)
			require.NoError(t, err)
			require.Equal(t, c.goVal, parsed, "partition value round trip")

			ckptPart, ckptStats, partErr, statsErr := deltalog.CheckpointTexts(c.pqType, c.pqVal)
			require.NoError(t, partErr)
			require.NoError(t, statsErr)
			require.NotNil(t, ckptPart)
			require.Equal(t, c.partition, *ckptPart, "checkpoint partition value")

			require.Equal(t, c.stats, statsMin(t, ckptStats), "checkpoint stats")
			wantWriter := c.stats
			if c.typ == deltalog.TypeBoolean {
				wantWriter = ""
			}
			require.Equal(t, wantWriter, statsMin(t, writeOne(t, c.typ, c.goVal)), "datafile stats")
		})
	}
}

// Past 9999 a date or timestamp has no text: the writer refuses it as a partition
// value and keeps no stats bound; the checkpoint reader refuses to rebuild the
// partition value (null would move the rows) and omits the stats bound.
func TestValueTextOutsideYears(t *testing.T) {
	tsUTC := parquet.TimestampAdjusted(parquet.Microsecond, true).Type()
	for _, c := range []textCase{
		{name: "date 10000", typ: deltalog.TypeDate, goVal: int32(2932897), pqType: parquet.Date().Type(), pqVal: parquet.Int32Value(2932897)},
		{name: "timestamp 0000", typ: deltalog.TypeTimestamp, goVal: int64(-62135596800000001), pqType: tsUTC, pqVal: parquet.Int64Value(-62135596800000001)},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := datafile.PartitionValue(c.typ, c.goVal)
			require.ErrorIs(t, err, deltatext.ErrRange)
			require.Empty(t, statsMin(t, writeOne(t, c.typ, c.goVal)))
			_, stats, partErr, statsErr := deltalog.CheckpointTexts(c.pqType, c.pqVal)
			require.ErrorIs(t, partErr, deltatext.ErrRange)
			require.NoError(t, statsErr)
			require.Equal(t, "{}", stats)
		})
	}
}

// writeOne writes a one-row file with column c and returns its add.stats.
func writeOne(t *testing.T, typ deltalog.Type, v any) string {
	t.Helper()
	schema := &deltalog.StructType{Fields: []deltalog.StructField{{Name: "c", Type: typ, Nullable: true}}}
	w, err := datafile.NewWriter(datafile.Options{Schema: schema})
	require.NoError(t, err)
	adds, err := w.Write(t.Context(), memstore.New(memstore.Options{}), [][]any{{v}})
	require.NoError(t, err)
	require.Len(t, adds, 1)
	return adds[0].Stats
}

// statsMin is the raw JSON text of column c's bound: minValues.c of add.stats,
// or c of a checkpoint's flat stats object; "" when absent.
func statsMin(t *testing.T, stats string) string {
	t.Helper()
	var obj struct {
		MinValues map[string]json.RawMessage `json:"minValues"`
		C         json.RawMessage            `json:"c"`
	}
	require.NoError(t, json.Unmarshal([]byte(stats), &obj), stats)
	if obj.C != nil {
		return string(obj.C)
	}
	return string(obj.MinValues["c"])
}

func mustDecimal(s string, p, sc int) decimal128.Num {
	n, err := decimal128.Parse(s, p, sc)
	if err != nil {
		panic(err)
	}
	return n
}
