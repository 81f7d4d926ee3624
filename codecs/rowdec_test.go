package codecs

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRowDecoderCovers: the shapes a row decoder takes, and those it leaves
// to goavro with the reason.
func TestRowDecoderCovers(t *testing.T) {
	layout := func(names ...string) *Layout {
		l := &Layout{}
		for _, n := range names {
			l.Columns = append(l.Columns, Column{AvroName: n})
		}
		return l
	}
	rec := func(fields string) map[string]any {
		return map[string]any{"type": "record", "name": "Value", "fields": jsonList(t, fields)}
	}
	names := map[string]map[string]any{"x.Value": rec(`[{"name":"id","type":"int"}]`)}
	for _, tc := range []struct {
		name string
		node any
		l    *Layout
		err  string // empty: covered
	}{
		{"primitives and nullable unions", rec(`[{"name":"a","type":"long"},{"name":"b","type":["null","string"]},
			{"name":"c","type":["bytes","null"]},{"name":"d","type":{"type":"int","connect.type":"int16"}},
			{"name":"e","type":["null",{"type":"bytes","connect.name":"org.apache.kafka.connect.data.Decimal"}]}]`),
			layout("a", "b", "c", "d", "e"), ""},
		{"image by name", []any{"null", "Value"}, layout("id"), ""},
		{"image with null last", []any{"x.Value", "null"}, layout("id"), ""},
		{"unknown name", []any{"null", "Other"}, layout("id"), "is not a record"},
		{"image union of three", []any{"null", "Value", "string"}, layout("id"), "is not [null, T]"},
		{"field union of three", rec(`[{"name":"a","type":["null","int","string"]}]`), layout("a"), "is not [null, T]"},
		{"nested record", rec(`[{"name":"a","type":{"type":"record","name":"In","fields":[]}}]`), layout("a"), "not a primitive"},
		{"array", rec(`[{"name":"a","type":{"type":"array","items":"int"}}]`), layout("a"), "not a primitive"},
		{"fields not the layout's", rec(`[{"name":"a","type":"int"}]`), layout("b"), `field 0 is "a", column "b"`},
		{"fewer fields than columns", rec(`[{"name":"a","type":"int"}]`), layout("a", "b"), "1 fields, the layout 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rd, err := newRowDecoder(tc.node, "x", names, tc.l)
			if tc.err == "" {
				require.NoError(t, err)
				require.Len(t, rd.fields, len(tc.l.Columns))
				return
			}
			require.ErrorContains(t, err, tc.err)
			require.Nil(t, rd)
		})
	}
}

func jsonList(t *testing.T, s string) []any {
	t.Helper()
	var v []any
	require.NoError(t, json.Unmarshal([]byte(s), &v))
	return v
}
