package codecs_test

import (
	"math"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
	"github.com/cdc2delta/cdc2delta/internal/registry"
)

// genHarness encodes with dbzgen into the in-process registry and decodes
// with codecs through the real Registry client over HTTP.
type genHarness struct {
	gen *dbzgen.Generator
	dec *codecs.Decoder
}

func newGenHarness(t *testing.T, gopts dbzgen.Options, copts codecs.Options) *genHarness {
	t.Helper()
	reg, err := registry.New()
	require.NoError(t, err)
	srv := httptest.NewServer(reg.Handler())
	t.Cleanup(srv.Close)
	cl, err := sr.NewClient(sr.URLs(srv.URL))
	require.NoError(t, err)
	src, err := codecs.NewRegistry(codecs.RegistryOptions{URLs: []string{srv.URL}})
	require.NoError(t, err)
	dec, err := codecs.NewDecoder(src, copts)
	require.NoError(t, err)
	return &genHarness{gen: dbzgen.New(cl, gopts), dec: dec}
}

func (h *genHarness) decode(t *testing.T, ev dbzgen.Event) codecs.Change {
	t.Helper()
	key, value, err := h.gen.Encode(t.Context(), ev)
	require.NoError(t, err)
	ch, err := h.dec.Decode(t.Context(), key, value)
	require.NoError(t, err)
	return ch
}

// byName returns the change's row keyed by column name; unavailable
// columns map to "<unavailable>".
func byName(ch codecs.Change) map[string]any {
	out := make(map[string]any, len(ch.Row))
	for i, c := range ch.Layout.Columns {
		out[c.Name] = ch.Row[i]
		if ch.IsUnavailable(i) {
			out[c.Name] = "<unavailable>"
		}
	}
	return out
}

func dec(t *testing.T, s string, scale int) decimal128.Num {
	d, err := decimal128.Parse(s, decimal128.MaxPrecision, scale)
	require.NoError(t, err)
	return d
}

// everyTypeWant is dbzgen.EveryTypeRow decoded under Debezium's defaults
// (adaptive, precise, bytes), worked out by hand from the brief: SQL Server
// rounds time(0) and smalldatetime, pads char(n) and binary(n); the 100 ns
// digit is floored; datetime2(7) 9999-12-31 does not fit NanoTimestamp and
// arrives as NULL.
func everyTypeWant(t *testing.T) map[string]any {
	return map[string]any{
		"id":                 int32(1),
		"c_bit":              true,
		"c_tinyint":          int16(255),
		"c_smallint":         int16(math.MinInt16),
		"c_int":              int32(math.MinInt32),
		"c_bigint":           int64(math.MaxInt64),
		"c_real":             float32(1.5),
		"c_float24":          float32(-0.25),
		"c_float":            math.Pi,
		"c_decimal":          dec(t, "9999999999999999999999999999.9999999999", 10),
		"c_decimal_int":      dec(t, "-99999999999999999999999999999999999999", 0),
		"c_numeric":          dec(t, "123456789012345678", 0),
		"c_numeric_5_5":      dec(t, "-0.00001", 5),
		"c_money":            dec(t, "-922337203685477.5808", 4),
		"c_smallmoney":       dec(t, "214748.3647", 4),
		"c_char":             "ab   ",
		"c_nchar":            "é    ",
		"c_varchar":          "",
		"c_nvarchar":         "日本語",
		"c_varchar_max":      "<unavailable>",
		"c_nvarchar_max":     strings.Repeat("x", 300),
		"c_text":             "t",
		"c_ntext":            "nt",
		"c_xml":              "<a/>",
		"c_uniqueidentifier": "6F9619FF-8B86-D011-B42D-00C04FC964FF",
		"c_binary":           []byte{1, 2, 0, 0},
		"c_varbinary":        []byte{0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab},
		"c_varbinary_max":    "<unavailable>",
		"c_image":            []byte{0xff},
		"c_rowversion":       []byte{0, 0, 0, 0, 0, 0, 0x07, 0xd1},
		"c_geometry":         []byte{0xe6, 0x10},
		"c_geography":        []byte{0xe6, 0x11},
		"c_hierarchyid":      []byte{0x58},
		"c_date":             int32(-719162),
		"c_time0":            int64(37426000000), // 10:23:46
		"c_time3":            int64(37425679000), // 10:23:45.679
		"c_time6":            int64(37425678901), // 10:23:45.678901
		"c_time":             int64(37425678901), // 10:23:45.6789012, 100 ns dropped
		"c_datetime":         int64(1710498645123000),
		"c_smalldatetime":    int64(1710498660000000), // 10:31
		"c_datetime2_0":      int64(253402300799000000),
		"c_datetime2_3":      int64(1710498645123000), // wall clock, zone ignored
		"c_datetime2_6":      int64(-62135596799999999),
		"c_datetime2":        nil,
		"c_datetimeoffset3":  int64(1710518445124000), // 10:30:45.124-05:30
		"c_datetimeoffset":   int64(1710491445123456), // 10:30:45.1234567+02:00
		"Unit Price":         dec(t, "9.9900", 4),
	}
}

var everyTypeDelta = map[string]string{
	"id": "integer", "c_bit": "boolean", "c_tinyint": "short", "c_smallint": "short", "c_int": "integer",
	"c_bigint": "long", "c_real": "float", "c_float24": "float", "c_float": "double",
	"c_decimal": "decimal(38,10)", "c_decimal_int": "decimal(38,0)", "c_numeric": "decimal(18,0)",
	"c_numeric_5_5": "decimal(5,5)", "c_money": "decimal(19,4)", "c_smallmoney": "decimal(10,4)",
	"c_char": "string", "c_nchar": "string", "c_varchar": "string", "c_nvarchar": "string",
	"c_varchar_max": "string", "c_nvarchar_max": "string", "c_text": "string", "c_ntext": "string",
	"c_xml": "string", "c_uniqueidentifier": "string", "c_binary": "binary", "c_varbinary": "binary",
	"c_varbinary_max": "binary", "c_image": "binary", "c_rowversion": "binary", "c_geometry": "binary",
	"c_geography": "binary", "c_hierarchyid": "binary", "c_date": "date", "c_time0": "long",
	"c_time3": "long", "c_time6": "long", "c_time": "long", "c_datetime": "timestamp_ntz",
	"c_smalldatetime": "timestamp_ntz", "c_datetime2_0": "timestamp_ntz", "c_datetime2_3": "timestamp_ntz",
	"c_datetime2_6": "timestamp_ntz", "c_datetime2": "timestamp_ntz", "c_datetimeoffset3": "timestamp",
	"c_datetimeoffset": "timestamp", "Unit Price": "decimal(19,4)",
}

func TestDbzgenEveryType(t *testing.T) {
	tests := []struct {
		name    string
		gopts   dbzgen.Options
		copts   codecs.Options
		changed map[string]any    // differences from everyTypeWant
		types   map[string]string // differences from everyTypeDelta
		noNames bool              // original names not propagated
	}{
		{name: "defaults 3.1+", gopts: dbzgen.Options{PropagateSourceTypes: true}},
		{name: "layout 2.7", gopts: dbzgen.Options{Layout: dbzgen.Layout27, PropagateSourceTypes: true}},
		{name: "layout 2.6", gopts: dbzgen.Options{Layout: dbzgen.Layout26, PropagateSourceTypes: true}},
		{name: "layout 2.5", gopts: dbzgen.Options{Layout: dbzgen.Layout25, PropagateSourceTypes: true}},
		{name: "no propagation", gopts: dbzgen.Options{}, noNames: true},
		{name: "adaptive_time_microseconds", gopts: dbzgen.Options{TimePrecision: dbzgen.TimeAdaptiveMicroseconds, PropagateSourceTypes: true}},
		{name: "connect", gopts: dbzgen.Options{TimePrecision: dbzgen.TimeConnect, PropagateSourceTypes: true},
			changed: map[string]any{
				"c_time6": int64(37425678000), "c_time": int64(37425678000),
				"c_datetime2_6": int64(-62135596800000000), "c_datetime2": int64(253402300799999000),
			}},
		{name: "decimal string", gopts: dbzgen.Options{DecimalHandling: dbzgen.DecimalString, PropagateSourceTypes: true}},
		{name: "decimal double", gopts: dbzgen.Options{DecimalHandling: dbzgen.DecimalDouble, PropagateSourceTypes: true},
			changed: map[string]any{
				"c_decimal": 1e28, "c_decimal_int": -1e38, "c_numeric": 123456789012345678.0, "c_numeric_5_5": -0.00001,
				"c_money": -922337203685477.5808, "c_smallmoney": 214748.3647, "Unit Price": 9.99,
			},
			types: map[string]string{"c_decimal": "double", "c_decimal_int": "double", "c_numeric": "double", "c_numeric_5_5": "double",
				"c_money": "double", "c_smallmoney": "double", "Unit Price": "double"}},
		{name: "binary hex", gopts: dbzgen.Options{BinaryHandling: dbzgen.BinaryHex, PropagateSourceTypes: true}, copts: codecs.Options{BinaryHandling: codecs.BinaryHex}},
		{name: "binary base64", gopts: dbzgen.Options{BinaryHandling: dbzgen.BinaryBase64, PropagateSourceTypes: true}, copts: codecs.Options{BinaryHandling: codecs.BinaryBase64}},
		{name: "binary base64 url", gopts: dbzgen.Options{BinaryHandling: dbzgen.BinaryBase64URLSafe, PropagateSourceTypes: true}, copts: codecs.Options{BinaryHandling: codecs.BinaryBase64URL}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newGenHarness(t, tc.gopts, tc.copts)
			table, err := h.gen.Table(dbzgen.EveryType())
			require.NoError(t, err)
			ch := h.decode(t, dbzgen.Event{Table: table, Op: dbzgen.OpCreate, After: dbzgen.EveryTypeRow(),
				Source: dbzgen.Source{Time: time.UnixMilli(1710498645130), CommitLSN: dbzgen.MakeLSN(0x2b, 0xe10, 5), ChangeLSN: dbzgen.MakeLSN(0x2b, 0xe10, 3), SerialNo: 1}})

			want := everyTypeWant(t)
			for k, v := range tc.changed {
				want[k] = v
			}
			got := byName(ch)
			if tc.noNames {
				want["Unit_Price"] = want["Unit Price"]
				delete(want, "Unit Price")
			}
			for name, w := range want {
				if f, ok := w.(float64); ok && tc.name == "decimal double" {
					require.InDelta(t, f, got[name], math.Abs(f)*1e-15, name)
					continue
				}
				require.Equal(t, w, got[name], name)
			}
			require.Len(t, got, len(want), "sql_variant is dropped, nothing else")

			for _, c := range ch.Layout.Columns {
				name := c.Name
				if name == "Unit_Price" {
					name = "Unit Price"
				}
				wantType := everyTypeDelta[name]
				if o, ok := tc.types[name]; ok {
					wantType = o
				}
				require.Equal(t, wantType, c.Type.DeltaName(), c.Name)
				require.Equal(t, name != "id", c.Nullable, c.Name)
				switch {
				case c.Type.Kind == codecs.KindTime:
					require.Contains(t, c.Comment, "microseconds since midnight", c.Name)
				case tc.noNames:
					require.Empty(t, c.Comment, c.Name)
				default:
					require.NotEmpty(t, c.Comment, c.Name)
				}
			}
			require.Equal(t, codecs.TableID{Database: "sales", Schema: "dbo", Table: "all_types"}, ch.Table)
			require.Equal(t, []any{int32(1)}, ch.Key)
		})
	}
}

func TestDbzgenOpsAndPositions(t *testing.T) {
	h := newGenHarness(t, dbzgen.Options{}, codecs.Options{})
	orders, err := h.gen.Table(dbzgen.Orders())
	require.NoError(t, err)
	w, err := dbzgen.NewWorkload(dbzgen.WorkloadOptions{Seed: 3, Keys: 20, Snapshot: true, MaxTxEvents: 3, TransactionMetadata: true}, orders)
	require.NoError(t, err)

	counts := map[codecs.Op]int{}
	var last codecs.Position
	for i := range 400 {
		ev := w.Next()
		key, value, err := h.gen.Encode(t.Context(), ev)
		require.NoError(t, err)
		ch, err := h.dec.Decode(t.Context(), key, value)
		require.NoError(t, err, "event %d", i)
		counts[ch.Op]++
		if ch.Op == codecs.OpTombstone {
			require.NotEmpty(t, ch.Key)
			continue
		}
		require.Equal(t, codecs.LSN(ev.Source.CommitLSN), ch.Pos.Commit)
		require.Equal(t, codecs.LSN(ev.Source.ChangeLSN), ch.Pos.Change)
		require.Equal(t, ev.Source.SerialNo, ch.Pos.Serial)
		require.Equal(t, ev.Source.Snapshot, ch.Snapshot)
		if ev.Transaction != nil {
			require.Equal(t, ev.Transaction.ID, ch.TxID)
			require.Equal(t, ev.Transaction.DataCollectionOrder, ch.TxOrder)
		}
		// The workload emits in log order, so positions never go back.
		require.GreaterOrEqual(t, ch.Pos.Compare(last), 0, "event %d", i)
		last = ch.Pos
		require.Equal(t, len(ch.KeyIndex), len(ch.Key))
		for k, j := range ch.KeyIndex {
			require.Equal(t, ch.Key[k], ch.Row[j], "key value equals the row's key column")
		}
	}
	require.Equal(t, 20, counts[codecs.OpRead])
	require.Positive(t, counts[codecs.OpCreate]+counts[codecs.OpUpdate])
	require.Positive(t, counts[codecs.OpDelete])
	require.Equal(t, counts[codecs.OpDelete], counts[codecs.OpTombstone])
}
