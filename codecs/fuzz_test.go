package codecs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func FuzzWireFormat(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 1})
	f.Add([]byte{0, 0, 0, 1, 2, 0xaa, 0xbb})
	f.Add([]byte{1, 0, 0, 0, 1})
	f.Add([]byte{0, 0x80, 0, 0, 0})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		id, body, err := SplitHeader(b)
		if err != nil {
			if !errors.Is(err, ErrBadHeader) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if id < 0 {
			t.Fatalf("negative id %d", id)
		}
		round := append(AppendHeader(nil, id), body...)
		if string(round) != string(b) {
			t.Fatalf("round trip %x != %x", round, b)
		}
	})
}

var decodeSentinels = []error{
	ErrBadHeader, ErrUnknownSchema, ErrRegistry, ErrRegistryRefused, ErrUnsupportedSchema, ErrBadBody,
	ErrUnknownOp, ErrMissingKey, ErrBadEnvelope, ErrOutOfRange,
}

func FuzzDecodeChange(f *testing.F) {
	fx := newFixture(f, layoutV3, Options{BinaryHandling: BinaryHex})
	// A second table covering the remaining conversions, under ids 20/21.
	all := []tcol{
		{name: "id", typ: "long"},
		{name: "t2", typ: int16Type(), nullable: true},
		{name: "d", typ: decType(38, 10), nullable: true},
		{name: "ns", typ: dbzType("long", nameNanoTs), nullable: true},
		{name: "us", typ: dbzType("long", nameMicroTs), nullable: true},
		{name: "tm", typ: dbzType("long", nameNanoTime), nullable: true},
		{name: "tms", typ: dbzType("int", nameTime), nullable: true},
		{name: "b", typ: "bytes", nullable: true},
		{name: "hx", typ: propagated("string", "VARBINARY", "8", ""), nullable: true},
		{name: "ds", typ: propagated("string", "DECIMAL", "10", "2"), nullable: true},
		{name: "f", typ: "float", nullable: true},
		{name: "dflt", typ: "string", nullable: true, nullLast: true, def: "x"},
	}
	env2 := envelopeSchema(layoutV2, all)
	fx.src.add(20, keySchema(all[:1]))
	fx.src.add(21, env2)
	key2 := encode(f, 20, keySchema(all[:1]), map[string]any{"id": int64(5)})
	row2 := map[string]any{"id": int64(5), "t2": union("int", int32(200)), "d": union("bytes", []byte{0x80}),
		"ns": union("long", int64(-1)), "us": union("long", int64(1)), "tm": union("long", int64(5)), "tms": union("int", int32(5)),
		"b": union("bytes", []byte("x")), "hx": union("string", "00ff"), "ds": union("string", "1.50"), "f": union("float", float32(1)),
		"dflt": union("string", "y")}

	src := srcBlock{snapshot: "false", commit: "0000002b:00000e10:0005", change: "0000002b:00000e10:0003", serial: int64(1), tsMS: 1}
	row := ordersRow("NEW", []byte{0x30, 0x39}, 1710498645123)
	f.Add(fx.key, fx.value(f, "c", nil, row, src, ""))
	f.Add(fx.key, fx.value(f, "u", row, row, src, "tx"))
	f.Add(fx.key, fx.value(f, "d", row, nil, src, ""))
	f.Add(fx.key, fx.value(f, "r", nil, row, srcBlock{snapshot: "last", commit: "0000002b:00000e10:0005"}, ""))
	f.Add(fx.key, fx.value(f, "t", nil, nil, src, ""))
	f.Add(fx.key, []byte{})
	f.Add([]byte{}, fx.value(f, "c", nil, row, src, ""))
	f.Add(key2, encode(f, 21, env2, envelope(layoutV2, "c", nil, row2, src, "")))
	f.Add(key2, encode(f, 21, env2, envelope(layoutV2, "d", row2, nil, src, "")))
	f.Add([]byte{0, 0, 0, 0, 7, 0xff}, []byte{0, 0, 0, 0, 8, 0xff, 0xff, 0xff})

	// The brief's example schemas and golden events (ids 1 and 2).
	dir := filepath.Join("testdata", "debezium")
	for id, file := range map[int]string{goldenKeyID: "orders.key.avsc", goldenValueID: "orders.value.avsc"} {
		text, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			f.Fatal(err)
		}
		fx.src.add(id, string(text))
	}
	for name := range goldenEvents() {
		key, kerr := os.ReadFile(filepath.Join(dir, name+".key.bin"))
		value, verr := os.ReadFile(filepath.Join(dir, name+".value.bin"))
		if err := errors.Join(kerr, verr); err != nil {
			f.Fatal(err)
		}
		f.Add(key, value)
	}

	whole := wholeTwin(f, fx.dec)
	f.Fuzz(func(t *testing.T, key, value []byte) {
		if len(key)+len(value) > 1<<16 {
			return
		}
		// The envelope plan and goavro alone must agree on every input.
		sameDecode(t, fx.dec, whole, key, value)
		ch, err := fx.dec.Decode(t.Context(), key, value)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("not a DecodeError: %v", err)
			}
			for _, s := range decodeSentinels {
				if errors.Is(err, s) {
					return
				}
			}
			t.Fatalf("error wraps no sentinel: %v", err)
		}
		switch ch.Op {
		case OpCreate, OpUpdate, OpDelete, OpRead:
			if ch.Layout == nil || len(ch.Row) != len(ch.Layout.Columns) || len(ch.Key) != len(ch.KeyIndex) || len(ch.Key) == 0 {
				t.Fatalf("inconsistent change %+v", ch)
			}
			for _, u := range ch.Unavailable {
				if ch.Row[u] != nil {
					t.Fatalf("unavailable column %d holds %v", u, ch.Row[u])
				}
			}
		case OpTruncate, OpTombstone:
			if ch.Row != nil {
				t.Fatalf("%s with a row", ch.Op)
			}
		default:
			t.Fatalf("unexpected op %v", ch.Op)
		}
	})
}
