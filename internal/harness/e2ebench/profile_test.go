package e2ebench

import (
	"bytes"
	"compress/gzip"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
)

// testProfile builds a pprof profile: each stack (function names,
// innermost first) gets one sample with values {1, cpu}.
type testProfile struct {
	stacks [][]string
	cpu    []int64
	packed bool // packed repeated fields, as runtime/pprof writes them
}

func (tp testProfile) encode(gz bool) []byte {
	strs := []string{"", "samples", "count", "cpu", "nanoseconds"}
	idx := func(s string) uint64 {
		for i, x := range strs {
			if x == s {
				return uint64(i)
			}
		}
		strs = append(strs, s)
		return uint64(len(strs) - 1)
	}
	msg := func(fields ...[]byte) []byte { return bytes.Join(fields, nil) }
	varint := func(num protowire.Number, v uint64) []byte {
		return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), v)
	}
	bytesField := func(num protowire.Number, b []byte) []byte {
		return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), b)
	}
	repeated := func(num protowire.Number, vs []uint64) []byte {
		if !tp.packed {
			var out []byte
			for _, v := range vs {
				out = append(out, varint(num, v)...)
			}
			return out
		}
		var p []byte
		for _, v := range vs {
			p = protowire.AppendVarint(p, v)
		}
		return bytesField(num, p)
	}
	var out []byte
	out = append(out, bytesField(fieldSampleType, msg(varint(fieldValueTypeType, idx("samples")), varint(2, idx("count"))))...)
	out = append(out, bytesField(fieldSampleType, msg(varint(fieldValueTypeType, idx("cpu")), varint(2, idx("nanoseconds"))))...)
	funcs := map[string]uint64{}
	var nextLoc uint64
	for i, stack := range tp.stacks {
		var locs []uint64
		// Two functions per location: the second is the caller the first
		// was inlined into.
		for j := 0; j < len(stack); j += 2 {
			var lines []byte
			for _, fn := range stack[j:min(j+2, len(stack))] {
				id, ok := funcs[fn]
				if !ok {
					id = uint64(len(funcs) + 1)
					funcs[fn] = id
					out = append(out, bytesField(fieldFunction, msg(varint(fieldFunctionID, id), varint(fieldFunctionName, idx(fn))))...)
				}
				lines = append(lines, bytesField(fieldLocationLine, msg(varint(fieldLineFunction, id), varint(2, 42)))...)
			}
			nextLoc++
			out = append(out, bytesField(fieldLocation, msg(varint(fieldLocationID, nextLoc), varint(3, 0xdead), lines))...)
			locs = append(locs, nextLoc)
		}
		out = append(out, bytesField(fieldSample, msg(repeated(fieldSampleLocation, locs), repeated(fieldSampleValue, []uint64{1, uint64(tp.cpu[i])})))...)
	}
	for _, s := range strs {
		out = append(out, bytesField(fieldStringTable, []byte(s))...)
	}
	if !gz {
		return out
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(out) // a bytes.Buffer does not fail
	_ = zw.Close()
	return buf.Bytes()
}

func TestProfileShares(t *testing.T) {
	tp := testProfile{
		stacks: [][]string{
			{"runtime.mallocgc", "github.com/linkedin/goavro/v2.(*Codec).NativeFromBinary", "github.com/cdc2delta/cdc2delta/codecs.(*Decoder).DecodeRecord", "github.com/cdc2delta/cdc2delta/processor.(*Processor).decodeAll.func1"},
			{"github.com/klauspost/compress/zstd.(*Encoder).EncodeAll", "github.com/parquet-go/parquet-go.(*Writer).Write", "github.com/cdc2delta/cdc2delta/processor.(*Sink).Apply"},
			{"github.com/cdc2delta/cdc2delta/processor.dedup", "github.com/cdc2delta/cdc2delta/processor.(*Sink).Apply"},
			{"encoding/json.Marshal", "github.com/cdc2delta/cdc2delta/deltalog.(*Table).Commit"},
			{"github.com/klauspost/compress/s2.Decode", "github.com/twmb/franz-go/pkg/kgo.(*cursorOffsetNext).processRecordBatch"},
			{"runtime.scanobject", "runtime.gcDrain", "runtime.gcBgMarkWorker"},
			{"runtime.futex", "runtime.schedule", "runtime.mstart"},
			{"github.com/cdc2delta/cdc2delta/deltalog/datafile.Write", "github.com/cdc2delta/cdc2delta/processor.(*Sink).Apply"},
		},
		cpu: []int64{400, 100, 150, 50, 60, 200, 30, 10},
	}
	want := map[string]float64{
		CatDecode: 400, CatParquet: 110, CatMerge: 150, CatCommit: 50, CatKafka: 60, CatGC: 200, CatOther: 30,
	}
	for _, packed := range []bool{false, true} {
		for _, gz := range []bool{false, true} {
			tp.packed = packed
			got, err := ProfileShares(tp.encode(gz))
			require.NoError(t, err)
			require.Len(t, got, len(Categories()))
			for c, v := range want {
				require.InDelta(t, v/1000, got[c], 1e-9, "category %s (packed %v, gzip %v)", c, packed, gz)
			}
		}
	}
}

func TestProfileSharesRealProfile(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, pprof.StartCPUProfile(&buf))
	// Burn CPU in this package: no category owns it.
	deadline := time.Now().Add(300 * time.Millisecond)
	x := 0
	for time.Now().Before(deadline) {
		for i := range 1000 {
			x += i * i
		}
	}
	pprof.StopCPUProfile()
	require.NotZero(t, x)
	got, err := ProfileShares(buf.Bytes())
	require.NoError(t, err)
	sum := 0.0
	for _, s := range got {
		sum += s
	}
	require.InDelta(t, 1, sum, 1e-9)
	require.Greater(t, got[CatOther], 0.5)
	require.Zero(t, got[CatDecode])
}

func TestProfileSharesRejectsGarbage(t *testing.T) {
	for name, data := range map[string][]byte{
		"truncated tag":   {0x80},
		"truncated bytes": {0x12, 0x05, 0x01},
		"bad gzip":        {0x1f, 0x8b, 0x00},
		"packed overflow": protowire.AppendBytes(protowire.AppendTag(nil, fieldSample, protowire.BytesType),
			protowire.AppendBytes(protowire.AppendTag(nil, fieldSampleLocation, protowire.BytesType), []byte{0xff})),
	} {
		_, err := ProfileShares(data)
		require.ErrorIs(t, err, ErrProfile, name)
	}
}

func FuzzProfileShares(f *testing.F) {
	tp := testProfile{stacks: [][]string{{"github.com/twmb/franz-go/pkg/kgo.x", "main.main"}}, cpu: []int64{5}, packed: true}
	f.Add(tp.encode(false))
	f.Add(tp.encode(true))
	f.Add([]byte{})
	f.Add([]byte{0x12, 0x02, 0x10, 0x01})
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ProfileShares(data)
		if err != nil {
			require.ErrorIs(t, err, ErrProfile)
			return
		}
		require.Len(t, got, len(Categories()))
		sum := 0.0
		for c, s := range got {
			require.True(t, s >= 0 && s <= 1, "share of %s is %v", c, s)
			sum += s
		}
		require.True(t, sum == 0 || (sum > 0.999 && sum < 1.001), "shares sum to %v", sum)
	})
}
