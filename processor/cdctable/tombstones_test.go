package cdctable

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
)

// TestDecodeTombstoneLine checks that what the encoder writes takes the
// hand-written path and that every other line encoding/json reads is read
// as encoding/json reads it.
func TestDecodeTombstoneLine(t *testing.T) {
	floor := pos(9)
	written := encodeTombstones(map[string]tombstone{
		"\x01\x02":                  {pos: pos(3), at: 1_700_000_000_000},
		"key with \" and \\":        {pos: pos(4), at: 0},
		strings.Repeat("\xff", 300): {pos: pos(5), at: 42},
	}, &floor)
	lines := bytes.Split(bytes.TrimSuffix(written, []byte("\n")), []byte("\n"))
	require.Len(t, lines, 4)
	for _, line := range lines {
		var l TombstoneLine
		var scratch []byte
		require.True(t, decodeTombstoneLineFast(line, &l, &scratch), "%s", line)
		requireDecodesAsJSON(t, line)
	}

	h := pos(3).Hex()
	for _, tc := range []struct {
		name, line string
		fails      bool
	}{
		{"spaces", `{ "k": "AQI=", "p": "` + h + `", "t": 1 }`, false},
		{"fields reordered", `{"p":"` + h + `","k":"AQI=","t":1}`, false},
		{"no time", `{"k":"AQI=","p":"` + h + `"}`, false},
		{"empty key", `{"k":"","p":"` + h + `","t":1}`, false},
		{"escaped position", `{"k":"AQI=","p":"\u0030` + h[1:] + `","t":1}`, false},
		{"exponent", `{"k":"AQI=","p":"` + h + `","t":1e3}`, false},
		{"negative time", `{"k":"AQI=","p":"` + h + `","t":-5}`, false},
		{"floor false", `{"p":"` + h + `","t":0,"f":false}`, false},
		{"floor with a key", `{"k":"AQI=","p":"` + h + `","t":0,"f":true}`, false},
		{"unknown field", `{"k":"AQI=","p":"` + h + `","t":1,"x":2}`, false},
		{"unpadded base64", `{"k":"AQI","p":"` + h + `","t":1}`, true},
		{"leading zero", `{"k":"AQI=","p":"` + h + `","t":01}`, true},
		{"time too large", `{"k":"AQI=","p":"` + h + `","t":99999999999999999999}`, true},
		{"trailing bytes", `{"k":"AQI=","p":"` + h + `","t":1}x`, true},
		{"truncated", `{"k":"AQI=","p":"` + h, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l TombstoneLine
			var scratch []byte
			err := DecodeTombstoneLine([]byte(tc.line), &l, &scratch)
			if tc.fails {
				require.Error(t, err)
			}
			requireDecodesAsJSON(t, []byte(tc.line))
		})
	}
}

// requireDecodesAsJSON checks DecodeTombstoneLine against encoding/json,
// which defines the format.
func requireDecodesAsJSON(t testing.TB, line []byte) {
	t.Helper()
	var want, got TombstoneLine
	wantErr := json.Unmarshal(line, &want)
	scratch := []byte("stale scratch bytes from an earlier line")
	gotErr := DecodeTombstoneLine(line, &got, &scratch)
	if wantErr != nil {
		require.Error(t, gotErr, "encoding/json refuses %q", line)
		return
	}
	require.NoError(t, gotErr, "%q", line)
	if len(want.Key) == 0 && len(got.Key) == 0 {
		want.Key, got.Key = nil, nil // omitted and empty are the same key
	}
	require.Equal(t, want, got, "%q", line)
}

// FuzzTombstoneLine compares DecodeTombstoneLine with encoding/json on
// arbitrary lines.
func FuzzTombstoneLine(f *testing.F) {
	h := pos(3).Hex()
	f.Add([]byte(`{"k":"AQI=","p":"` + h + `","t":1700000000000}`))
	f.Add([]byte(`{"p":"` + h + `","t":0,"f":true}`))
	f.Add([]byte(`{"k":"AQI=","p":"` + h + `","t":-0}`))
	f.Add([]byte(`{"k":"AQJ=","p":"` + h + `","t":1}`))
	f.Add([]byte(`{"k":"AQI=","p":"zz","t":1}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		requireDecodesAsJSON(t, line)
	})
}

// TestEncodeTombstonesAsJSON checks that the hand-written encoder writes
// the bytes encoding/json writes for the same lines.
func TestEncodeTombstonesAsJSON(t *testing.T) {
	for _, tc := range []struct {
		name  string
		key   string
		pos   codecs.Position
		at    int64
		floor bool
	}{
		{"key", "order-1", pos(3), 1_700_000_000_000, false},
		{"binary key", "\x00\xff\x01", pos(4), 0, false},
		{"escapes in the key", "<&> \" \\ \u2028", pos(5), -7, false},
		{"empty key", "", pos(6), 1, false},
		{"large position", "k", codecs.Position{Commit: codecs.LSN{0xff, 0xfe}, Change: codecs.LSN{9: 0xab}, Serial: 1<<62 + 3}, 1 << 62, false},
		{"floor", "", pos(9), 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireEncodesAsJSON(t, []byte(tc.key), tc.pos, tc.at, tc.floor)
		})
	}
}

func requireEncodesAsJSON(t testing.TB, key []byte, p codecs.Position, at int64, floor bool) {
	t.Helper()
	want := TombstoneLine{Key: key, Pos: p.Hex(), At: at}
	if floor {
		want = TombstoneLine{Pos: p.Hex(), Floor: true}
	}
	var buf bytes.Buffer
	require.NoError(t, json.NewEncoder(&buf).Encode(want))
	if floor {
		require.Equal(t, buf.String(), string(encodeTombstones(nil, &p)))
		return
	}
	got := AppendTombstoneLine(nil, string(key), p, at, false)
	require.Equal(t, buf.String(), string(got))
	if len(key) > 0 {
		require.Equal(t, buf.String(), string(encodeTombstones(map[string]tombstone{string(key): {pos: p, at: at}}, nil)))
	}
}

// FuzzEncodeTombstoneLine compares AppendTombstoneLine with encoding/json
// on arbitrary keys, positions and times.
func FuzzEncodeTombstoneLine(f *testing.F) {
	f.Add([]byte("order-1"), []byte("0123456789abcdefghijklmnopqrstuv"), int64(1_700_000_000_000), false)
	f.Add([]byte{}, make([]byte, codecs.PositionLen), int64(0), true)
	f.Fuzz(func(t *testing.T, key, bin []byte, at int64, floor bool) {
		bin = append(bin, make([]byte, codecs.PositionLen)...)[:codecs.PositionLen]
		bin[codecs.PositionLen-8] &= 0x7f // serials are not negative
		p, err := codecs.PositionFromBinary(bin)
		require.NoError(t, err)
		requireEncodesAsJSON(t, key, p, at, floor)
	})
}

// BenchmarkEncodeTombstones compares the hand-written encoder with
// encoding/json on 1000 entries with 16-byte keys.
//
//	go test ./processor/cdctable -run '^$' -bench BenchmarkEncodeTombstones -count 6
func BenchmarkEncodeTombstones(b *testing.B) {
	keys := map[string]tombstone{}
	for i := range 1000 {
		keys[fmt.Sprintf("order-%010d", i)] = tombstone{pos: pos(i), at: 1_700_000_000_000 + int64(i)}
	}
	for _, bc := range []struct {
		name   string
		encode func() []byte
	}{
		{"AppendTombstoneLine", func() []byte { return encodeTombstones(keys, nil) }},
		{"encoding-json", func() []byte {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			for k, ts := range keys {
				if err := enc.Encode(TombstoneLine{Key: []byte(k), Pos: ts.pos.Hex(), At: ts.at}); err != nil {
					b.Fatal(err)
				}
			}
			return buf.Bytes()
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			n := 0
			for b.Loop() {
				if len(bc.encode()) == 0 {
					b.Fatal("nothing encoded")
				}
				n += len(keys)
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "lines/s")
		})
	}
}

// BenchmarkDecodeTombstoneLine compares the two decoders on what the
// encoder writes: a 16-byte key each.
//
//	go test ./processor/cdctable -run '^$' -bench BenchmarkDecodeTombstoneLine -count 6
func BenchmarkDecodeTombstoneLine(b *testing.B) {
	keys := map[string]tombstone{}
	for i := range 1000 {
		keys[fmt.Sprintf("order-%010d", i)] = tombstone{pos: pos(i), at: 1_700_000_000_000 + int64(i)}
	}
	data := encodeTombstones(keys, nil)
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	for _, bc := range []struct {
		name   string
		decode func(line []byte, l *TombstoneLine, scratch *[]byte) error
	}{
		{"DecodeTombstoneLine", DecodeTombstoneLine},
		{"encoding-json", func(line []byte, l *TombstoneLine, _ *[]byte) error { return json.Unmarshal(line, l) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var (
				l       TombstoneLine
				scratch []byte
				n       int
			)
			for b.Loop() {
				for _, line := range lines {
					if err := bc.decode(line, &l, &scratch); err != nil {
						b.Fatal(err)
					}
					if _, err := codecs.PositionFromHex(l.Pos); err != nil {
						b.Fatal(err)
					}
				}
				n += len(lines)
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "lines/s")
		})
	}
}

// tombstone is an entry of a tombstone file, as the engine keeps it.
type tombstone struct {
	pos codecs.Position
	at  int64
}

// encodeTombstones renders a tombstone file as the engine does: the floor
// first, then one line per key.
func encodeTombstones(keys map[string]tombstone, floor *codecs.Position) []byte {
	var buf []byte
	if floor != nil {
		buf = AppendTombstoneLine(buf, "", *floor, 0, true)
	}
	for k, ts := range keys {
		buf = AppendTombstoneLine(buf, k, ts.pos, ts.at, false)
	}
	return buf
}

func pos(n int) codecs.Position {
	var l codecs.LSN
	l[8], l[9] = byte(n>>8), byte(n)
	return codecs.Position{Commit: l, Change: l, Serial: 1}
}
