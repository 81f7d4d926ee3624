package fulltier

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDecodeTables(t *testing.T) {
	tests := []struct {
		name    string
		out     string
		want    []Table
		wantErr string
	}{
		{
			name: "rows keep exact numbers",
			out: `[{"engine":"deltars","path":"/t","version":3,` +
				`"schema":[{"name":"id","type":"long","nullable":false},` +
				`{"name":"s","type":{"type":"struct","fields":[{"name":"x","type":"long","nullable":true}]},"nullable":null}],` +
				`"rows":[{"id":9007199254740993,"s":{"x":1}}],"num_rows":1,` +
				`"txn":{"a":5,"b":null},"protocol":{"minReaderVersion":1,"minWriterVersion":2,"readerFeatures":null,"writerFeatures":null},` +
				`"error":null}]`,
			want: []Table{{
				Engine:  DeltaRS,
				Path:    "/t",
				Version: ptr(3),
				Schema: []Field{
					{Name: "id", Type: "long", Nullable: boolPtr(false)},
					{Name: "s", Type: map[string]any{"type": "struct", "fields": []any{
						map[string]any{"name": "x", "type": "long", "nullable": true},
					}}},
				},
				Rows:     []map[string]any{{"id": json.Number("9007199254740993"), "s": map[string]any{"x": json.Number("1")}}},
				Txn:      map[string]*int64{"a": ptr(5), "b": nil},
				Protocol: &Protocol{MinReaderVersion: 1, MinWriterVersion: 2},
			}},
		},
		{
			name: "engine error",
			out:  `[{"engine":"spark","path":"s3://b/t","version":null,"schema":[],"rows":[],"num_rows":0,"txn":{},"protocol":null,"error":"ValueError: no"}]`,
			want: []Table{{Engine: Spark, Path: "s3://b/t", Rows: []map[string]any{}, Txn: map[string]*int64{}, Err: "ValueError: no"}},
		},
		{
			name:    "row count mismatch",
			out:     `[{"engine":"duckdb","path":"/t","rows":[{"a":1}],"num_rows":2}]`,
			wantErr: "1 rows but num_rows 2",
		},
		{
			name:    "not JSON",
			out:     "Traceback (most recent call last):",
			wantErr: "decoding deltaread output",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeTables(tc.out)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestTableTypes(t *testing.T) {
	tb := Table{Schema: []Field{
		{Name: "a", Type: "decimal(10,2)", Nullable: boolPtr(true)},
		{Name: "m", Type: map[string]any{
			"type": "map", "keyType": "string", "valueContainsNull": true,
			"valueType": map[string]any{"type": "array", "elementType": "long", "containsNull": false},
		}},
		{Name: "s", Type: map[string]any{"type": "struct", "fields": []any{
			map[string]any{"name": "x", "type": "long", "nullable": nil},
		}}},
	}}
	require.Equal(t, []any{
		"decimal(10,2)",
		map[string]any{"type": "map", "keyType": "string",
			"valueType": map[string]any{"type": "array", "elementType": "long"}},
		map[string]any{"type": "struct", "fields": []any{map[string]any{"name": "x", "type": "long"}}},
	}, tb.Types())
	require.Equal(t, []string{"a", "m", "s"}, tb.Columns())
}

func ptr(v int64) *int64 { return &v }

func boolPtr(v bool) *bool { return &v }
