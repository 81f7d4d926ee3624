package codecs

import (
	"syscall"
	"testing"
	"time"

	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
)

// cpuTime is the process's user+system CPU time. The benchmark machine is
// shared, so wall-clock ns/op swings with other load; CPU time per event is
// what "events/s per core" means.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportRates reports events per wall second and per CPU second.
func reportRates(b *testing.B, cpuStart time.Duration) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(b.N)/(cpuTime(b)-cpuStart).Seconds(), "events/cpu-s")
}

// benchCols is a 12-column CDC row: key, strings, decimals, temporal types,
// a flag and a smallint, most nullable as Debezium makes them.
func benchCols() []tcol {
	return []tcol{
		{name: "order_id", typ: "long"},
		{name: "customer_id", typ: "string"},
		{name: "order_date", typ: dbzType("int", nameDate), nullable: true},
		{name: "status", typ: "string", nullable: true},
		{name: "amount", typ: decType(10, 2), nullable: true},
		{name: "updated_at", typ: dbzType("long", nameNanoTs), nullable: true},
		{name: "price", typ: decType(19, 4), nullable: true},
		{name: "created", typ: dbzType("string", nameZonedTs), nullable: true},
		{name: "flag", typ: "boolean", nullable: true},
		{name: "guid", typ: "string", nullable: true},
		{name: "qty", typ: int16Type(), nullable: true},
		{name: "notes", typ: "string", nullable: true},
	}
}

func benchRow(status string) map[string]any {
	return map[string]any{
		"order_id":    int64(1001),
		"customer_id": "C-42",
		"order_date":  union("int", int32(19797)),
		"status":      union("string", status),
		"amount":      union("bytes", []byte{0x30, 0x39}),
		"updated_at":  union("long", int64(1710498645123456700)),
		"price":       union("bytes", []byte{0x01, 0x86, 0x3c}),
		"created":     union("string", "2024-03-15T10:30:45.1234567+02:00"),
		"flag":        union("boolean", true),
		"guid":        union("string", "6F9619FF-8B86-D011-B42D-00C04FC964FF"),
		"qty":         union("int", int32(3)),
		"notes":       union("string", "leave at the door"),
	}
}

type benchCase struct {
	name       string
	key, value []byte
	dec        *Decoder
}

func benchCases(b *testing.B) []benchCase {
	cols := benchCols()
	src := newMapSource()
	ks, env := keySchema(cols[:1]), envelopeSchema(layoutV3, cols)
	src.add(1, ks)
	src.add(2, env)
	d, err := NewDecoder(src, Options{})
	if err != nil {
		b.Fatal(err)
	}
	key := encode(b, 1, ks, map[string]any{"order_id": int64(1001)})
	s := srcBlock{snapshot: "false", commit: "0000002b:00000e10:0005", change: "0000002b:00000e10:0003", serial: int64(2), tsMS: 1710498645130}
	return []benchCase{
		{name: "op=c", key: key, dec: d, value: encode(b, 2, env, envelope(layoutV3, "c", nil, benchRow("NEW"), s, ""))},
		{name: "op=u", key: key, dec: d, value: encode(b, 2, env, envelope(layoutV3, "u", benchRow("NEW"), benchRow("SHIPPED"), s, ""))},
	}
}

// BenchmarkDecode measures a 12-column change event from record bytes to a
// Change, schema cached (the steady state).
//
//	go test -run '^$' -bench 'Decode|Goavro' -benchmem -count 6 -cpu 1 ./codecs/
//
// rows=compiled is the default path (ADR 0033); rows=goavro has goavro
// decode the row image and key, as before it.
func BenchmarkDecode(b *testing.B) {
	for _, bc := range benchCases(b) {
		for _, rows := range []string{"compiled", "goavro"} {
			b.Run(bc.name+"/rows="+rows, func(b *testing.B) {
				dec, err := NewDecoder(bc.dec.schemas.src, bc.dec.opts)
				if err != nil {
					b.Fatal(err)
				}
				dec.goavroRows = rows == "goavro"
				if _, err := dec.Decode(b.Context(), bc.key, bc.value); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.SetBytes(int64(len(bc.key) + len(bc.value)))
				cpu := cpuTime(b)
				for b.Loop() {
					if _, err := dec.Decode(b.Context(), bc.key, bc.value); err != nil {
						b.Fatal(err)
					}
				}
				reportRates(b, cpu)
			})
		}
	}
}

// BenchmarkGoavroOnly is goavro's share of BenchmarkDecode: the same key and
// value bodies through the cached codecs, nothing else.
func BenchmarkGoavroOnly(b *testing.B) {
	for _, bc := range benchCases(b) {
		b.Run(bc.name, func(b *testing.B) {
			kc, err := bc.dec.schemas.get(b.Context(), 1)
			if err != nil {
				b.Fatal(err)
			}
			vc, err := bc.dec.schemas.get(b.Context(), 2)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			cpu := cpuTime(b)
			for b.Loop() {
				if _, _, err := kc.codec.NativeFromBinary(bc.key[headerLen:]); err != nil {
					b.Fatal(err)
				}
				if _, _, err := vc.codec.NativeFromBinary(bc.value[headerLen:]); err != nil {
					b.Fatal(err)
				}
			}
			reportRates(b, cpu)
		})
	}
}

// jsonBenchCases are benchCases' events as Kafka's JsonConverter writes
// them (schemas.enable=true), decimals in its default BASE64 format.
func jsonBenchCases(b *testing.B) []benchCase {
	cols := benchCols()
	ks, env := keySchema(cols[:1]), envelopeSchema(layoutV3, cols)
	d, err := NewDecoder(nil, Options{Converter: ConverterJSON})
	if err != nil {
		b.Fatal(err)
	}
	msg := func(schema string, native any) []byte {
		out, err := dbzgen.ConnectJSON(schema, native, dbzgen.DecimalBase64)
		if err != nil {
			b.Fatal(err)
		}
		return out
	}
	key := msg(ks, map[string]any{"order_id": int64(1001)})
	s := srcBlock{snapshot: "false", commit: "0000002b:00000e10:0005", change: "0000002b:00000e10:0003", serial: int64(2), tsMS: 1710498645130}
	return []benchCase{
		{name: "op=c", key: key, dec: d, value: msg(env, envelope(layoutV3, "c", nil, benchRow("NEW"), s, ""))},
		{name: "op=u", key: key, dec: d, value: msg(env, envelope(layoutV3, "u", benchRow("NEW"), benchRow("SHIPPED"), s, ""))},
	}
}

// BenchmarkDecodeJSON is BenchmarkDecode for the same events written by
// the JsonConverter: the Connect schema in every record, cached by text.
//
//	go test -run '^$' -bench 'DecodeJSON' -benchmem -count 6 -cpu 1 ./codecs/
func BenchmarkDecodeJSON(b *testing.B) {
	for _, bc := range jsonBenchCases(b) {
		b.Run(bc.name, func(b *testing.B) {
			if _, err := bc.dec.Decode(b.Context(), bc.key, bc.value); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.key) + len(bc.value)))
			cpu := cpuTime(b)
			for b.Loop() {
				if _, err := bc.dec.Decode(b.Context(), bc.key, bc.value); err != nil {
					b.Fatal(err)
				}
			}
			reportRates(b, cpu)
		})
	}
}
