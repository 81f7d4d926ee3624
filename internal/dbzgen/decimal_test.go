package dbzgen_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
)

// Decimal bytes must be what the Confluent converter writes: Java's
// BigInteger.toByteArray of the unscaled value, minimal big-endian two's
// complement. Expected bytes are from the brief §4.3/§9.3 or worked by hand.
func TestDecimalBytesAreJavaMinimalTwosComplement(t *testing.T) {
	tests := []struct {
		typ  string
		in   string
		want []byte
	}{
		{"decimal(10,2)", "123.45", []byte{0x30, 0x39}},
		{"decimal(10,2)", "-1.00", []byte{0x9c}},
		{"money", "9.99", []byte{0x01, 0x86, 0x3c}},
		{"decimal(10,2)", "150", []byte{0x3a, 0x98}},
		{"decimal(10,2)", "0", []byte{0x00}},
		{"decimal(10,0)", "127", []byte{0x7f}},
		{"decimal(10,0)", "128", []byte{0x00, 0x80}},
		{"decimal(10,0)", "-128", []byte{0x80}},
		{"decimal(10,0)", "-129", []byte{0xff, 0x7f}},
		{"money", "-922337203685477.5808", []byte{0x80, 0, 0, 0, 0, 0, 0, 0}},
		{"money", "922337203685477.5807", []byte{0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
	}
	for _, tc := range tests {
		t.Run(tc.typ+" "+tc.in, func(t *testing.T) {
			h := newHarness(t, dbzgen.DefaultOptions())
			tab, err := h.gen.Table(dbzgen.TableDef{Database: "d", Schema: "dbo", Name: "t", Key: []string{"id"},
				Columns: []dbzgen.Column{{Name: "id", Type: "int"}, {Name: "v", Type: tc.typ}}})
			require.NoError(t, err)
			_, value, err := h.gen.Encode(t.Context(), dbzgen.Event{Table: tab, Op: dbzgen.OpCreate, After: dbzgen.Row{"id": 0, "v": tc.in}})
			require.NoError(t, err)
			// Body: before null (0x00), after branch 1 (0x02), id 0 (0x00),
			// then the bytes' zig-zag length and the bytes.
			body := value[5:]
			require.Equal(t, []byte{0x00, 0x02, 0x00, byte(2 * len(tc.want))}, body[:4])
			require.Equal(t, tc.want, body[4:4+len(tc.want)])
		})
	}
}

// BenchmarkEncode measures the generator itself (quickstart and benchmark
// feeds): go test -run '^$' -bench Encode ./internal/dbzgen
func BenchmarkEncode(b *testing.B) {
	for _, def := range []dbzgen.TableDef{dbzgen.Orders(), dbzgen.EveryType()} {
		b.Run(def.Name, func(b *testing.B) {
			h := newHarness(b, dbzgen.DefaultOptions())
			tab, err := h.gen.Table(def)
			require.NoError(b, err)
			w, err := dbzgen.NewWorkload(dbzgen.WorkloadOptions{Seed: 1, Keys: 1000}, tab)
			require.NoError(b, err)
			events := make([]dbzgen.Event, 4096)
			for i := range events {
				events[i] = w.Next()
			}
			_, _, err = h.gen.Encode(b.Context(), events[0]) // registers
			require.NoError(b, err)
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				if _, _, err := h.gen.Encode(b.Context(), events[n%len(events)]); err != nil {
					b.Fatal(err)
				}
				n++
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
