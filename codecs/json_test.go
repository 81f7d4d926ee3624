package codecs_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
)

func newJSONDecoder(t testing.TB, opts codecs.Options) *codecs.Decoder {
	t.Helper()
	opts.Converter = codecs.ConverterJSON
	d, err := codecs.NewDecoder(nil, opts)
	require.NoError(t, err)
	return d
}

// sameChange compares two decodings of one event; the layouts' schema ids
// are the registry's for Avro and decoder-local for JSON, so only what a
// table sees (columns, types, names, comments) must agree.
func sameChange(t *testing.T, want, got codecs.Change, msg string) {
	t.Helper()
	require.Equal(t, want.Op, got.Op, msg)
	require.Equal(t, want.Table, got.Table, msg)
	require.Equal(t, want.Pos, got.Pos, msg)
	require.Equal(t, want.CommitMillis, got.CommitMillis, msg)
	require.Equal(t, want.Snapshot, got.Snapshot, msg)
	require.Equal(t, want.TxID, got.TxID, msg)
	require.Equal(t, want.TxOrder, got.TxOrder, msg)
	require.Equal(t, want.Row, got.Row, msg)
	require.Equal(t, want.Unavailable, got.Unavailable, msg)
	require.Equal(t, want.Key, got.Key, msg)
	require.Equal(t, want.KeyIndex, got.KeyIndex, msg)
	for _, l := range [][2]*codecs.Layout{{want.Layout, got.Layout}, {want.KeyLayout, got.KeyLayout}} {
		require.Equal(t, l[0] == nil, l[1] == nil, msg)
		if l[0] != nil {
			require.Equal(t, l[0].Name, l[1].Name, msg)
			require.Equal(t, l[0].Columns, l[1].Columns, msg)
		}
	}
}

// TestJSONMatchesAvro encodes one generated stream both ways, through the
// AvroConverter and through the JsonConverter (dbzgen.EncodeJSON, written
// from Kafka's rules, not from this decoder), and requires the same
// changes, layouts and transaction events from both decoders.
func TestJSONMatchesAvro(t *testing.T) {
	tests := []struct {
		name   string
		gopts  dbzgen.Options
		copts  codecs.Options
		format dbzgen.DecimalFormat
	}{
		{name: "defaults", gopts: dbzgen.Options{PropagateSourceTypes: true}},
		{name: "decimal numeric", gopts: dbzgen.Options{PropagateSourceTypes: true}, format: dbzgen.DecimalNumeric},
		{name: "layout 2.5", gopts: dbzgen.Options{Layout: dbzgen.Layout25}},
		{name: "connect time", gopts: dbzgen.Options{TimePrecision: dbzgen.TimeConnect, PropagateSourceTypes: true}},
		{name: "micro time", gopts: dbzgen.Options{TimePrecision: dbzgen.TimeAdaptiveMicroseconds}},
		{name: "decimal string", gopts: dbzgen.Options{DecimalHandling: dbzgen.DecimalString, PropagateSourceTypes: true}},
		{name: "decimal double", gopts: dbzgen.Options{DecimalHandling: dbzgen.DecimalDouble, PropagateSourceTypes: true}},
		{name: "binary base64", gopts: dbzgen.Options{BinaryHandling: dbzgen.BinaryBase64, PropagateSourceTypes: true}, copts: codecs.Options{BinaryHandling: codecs.BinaryBase64}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newGenHarness(t, tc.gopts, tc.copts)
			jd := newJSONDecoder(t, tc.copts)
			every, err := h.gen.Table(dbzgen.EveryType())
			require.NoError(t, err)
			orders, err := h.gen.Table(dbzgen.Orders())
			require.NoError(t, err)
			w, err := dbzgen.NewWorkload(dbzgen.WorkloadOptions{Seed: 7, Keys: 15, Snapshot: true, MaxTxEvents: 3,
				TransactionTopic: true, KeyChangeRatio: 0.1, Placeholders: 0.3, Redeliver: 0.05}, every, orders)
			require.NoError(t, err)
			events := []dbzgen.Event{{Table: every, Op: dbzgen.OpCreate, After: dbzgen.EveryTypeRow(),
				Source: dbzgen.Source{Time: time.UnixMilli(1710498645130), CommitLSN: dbzgen.MakeLSN(0x2b, 0xe10, 5)}}}
			for range 300 {
				events = append(events, w.Next())
			}
			ops := map[codecs.Op]int{}
			for i, ev := range events {
				key, value, err := h.gen.Encode(t.Context(), ev)
				require.NoError(t, err)
				jkey, jvalue, err := h.gen.EncodeJSON(ev, tc.format)
				require.NoError(t, err)
				msg := fmt.Sprintf("event %d: %.300s", i, jvalue)
				if ev.Marker != nil {
					want, err := h.dec.DecodeTransaction(t.Context(), "tx", 0, int64(i), value)
					require.NoError(t, err)
					got, err := jd.DecodeTransaction(t.Context(), "tx", 0, int64(i), jvalue)
					require.NoError(t, err, msg)
					require.Equal(t, want, got, msg)
					continue
				}
				want, err := h.dec.Decode(t.Context(), key, value)
				require.NoError(t, err)
				got, err := jd.Decode(t.Context(), jkey, jvalue)
				require.NoError(t, err, msg)
				sameChange(t, want, got, msg)
				ops[got.Op]++
			}
			for _, op := range []codecs.Op{codecs.OpCreate, codecs.OpRead, codecs.OpUpdate, codecs.OpDelete, codecs.OpTombstone} {
				require.Positive(t, ops[op], "op %s", op)
			}
		})
	}
}
