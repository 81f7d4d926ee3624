package codecs

import (
	"errors"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
)

// wholeTwin returns a decoder over the same schemas that decodes envelopes
// with goavro alone, the reference the plan must match.
func wholeTwin(t testing.TB, d *Decoder) *Decoder {
	t.Helper()
	twin, err := NewDecoder(d.schemas.src, d.opts)
	require.NoError(t, err)
	twin.wholeEnvelope, twin.goavroRows = true, true
	return twin
}

// sameDecode requires both decoders to agree: equal changes, or both
// failing with the same sentinel.
func sameDecode(t testing.TB, a, b *Decoder, key, value []byte) {
	t.Helper()
	ca, errA := a.Decode(t.Context(), key, value)
	cb, errB := b.Decode(t.Context(), key, value)
	if errA != nil || errB != nil {
		if errA == nil || errB == nil {
			t.Fatalf("plan err %v, goavro err %v", errA, errB)
		}
		for _, s := range decodeSentinels {
			if errors.Is(errA, s) != errors.Is(errB, s) {
				t.Fatalf("different failures: plan %v, goavro %v", errA, errB)
			}
		}
		return
	}
	if !reflect.DeepEqual(ca, cb) {
		t.Fatalf("plan decoded %+v, goavro %+v", ca, cb)
	}
}

func TestPlanMatchesGoavro(t *testing.T) {
	streaming := srcBlock{snapshot: "false", commit: "0000002b:00000e10:0005", change: "0000002b:00000e10:0003", serial: int64(1), tsMS: 1710498645130}
	row := ordersRow("NEW", []byte{0x30, 0x39}, 1710498645123)
	for _, v := range []layoutVersion{layoutV2, layoutV3} {
		f := newFixture(t, v, Options{})
		plan := f.dec
		whole := wholeTwin(t, plan)
		cases := [][]byte{
			f.value(t, "c", nil, row, streaming, ""),
			f.value(t, "u", row, ordersRow("SHIPPED", []byte{1}, 2), streaming, "0000002b:00000e10:0005"),
			f.value(t, "d", row, nil, streaming, ""),
			f.value(t, "r", nil, row, srcBlock{snapshot: "last_in_data_collection", commit: "0000002b:00000d98:0002"}, ""),
			f.value(t, "t", nil, nil, streaming, ""),
			f.value(t, "q", nil, row, streaming, ""),
			f.value(t, "c", row, nil, streaming, ""),
			f.value(t, "c", nil, row, srcBlock{commit: "bad"}, ""),
		}
		for i, value := range cases {
			sameDecode(t, plan, whole, f.key, value)
			if i < 5 {
				ch, err := plan.Decode(t.Context(), f.key, value)
				require.NoError(t, err)
				require.NotZero(t, ch.Op)
			}
			for cut := 5; cut < len(value); cut += 7 {
				sameDecode(t, plan, whole, f.key, value[:cut])
			}
		}
		vc, err := plan.schemas.get(t.Context(), f.valueID)
		require.NoError(t, err)
		require.NotNil(t, vc.plan, "the Debezium %d envelope is planned", v)
		for _, st := range vc.plan.steps {
			if st.kind == stepBefore || st.kind == stepAfter {
				require.NotNil(t, st.row, "its row images are decoded without goavro")
			}
		}
		kc, err := plan.schemas.get(t.Context(), f.keyID)
		require.NoError(t, err)
		require.NotNil(t, kc.row, "its key is decoded without goavro")
	}
}

func TestPlanFallsBackOnUnknownShapes(t *testing.T) {
	// A source block whose ts_ms is a string is outside the plan:
	// such schemas are decoded by goavro alone, and still correctly.
	src := newMapSource()
	env := `{"type":"record","name":"Envelope","namespace":"x","fields":[
	 {"name":"before","type":["null",{"type":"record","name":"Value","fields":[{"name":"id","type":"int"}]}],"default":null},
	 {"name":"after","type":["null","Value"],"default":null},
	 {"name":"source","type":{"type":"record","name":"Source","fields":[{"name":"ts_ms","type":"string"}]}},
	 {"name":"op","type":"string"}]}`
	src.add(1, env)
	src.add(2, `{"type":"record","name":"Key","namespace":"x","fields":[{"name":"id","type":"int"}]}`)
	d, err := NewDecoder(src, Options{})
	require.NoError(t, err)
	vc, err := d.schemas.get(t.Context(), 1)
	require.NoError(t, err)
	require.Nil(t, vc.plan)
	value := encode(t, 1, env, map[string]any{"before": nil, "after": union("x.Value", map[string]any{"id": int32(3)}),
		"source": map[string]any{"ts_ms": "t"}, "op": "c"})
	key := encode(t, 2, `{"type":"record","name":"Key","namespace":"x","fields":[{"name":"id","type":"int"}]}`, map[string]any{"id": int32(3)})
	ch, err := d.Decode(t.Context(), key, value)
	require.NoError(t, err)
	require.Equal(t, []any{int32(3)}, ch.Row)
}
