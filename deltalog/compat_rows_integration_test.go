//go:build integration

package deltalog_test

import (
	"cmp"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// The compat tests compare rows as canonical JSON strings, one per row, sorted. Both
// sides go through the same normalization, so a float that Python prints as "1e+300"
// and Go as "1e300", or an integer kept as json.Number, compare equal; everything
// else (decimals with their scale, ISO timestamps with microseconds, hex binary) is
// compared as the exact text deltaread.py produces.

// compatField is a column as the compat tests compare it.
type compatField struct {
	Name     string
	Type     string
	Nullable *bool
}

// ourFields describes a deltalog schema like deltaread.py describes an engine's.
func ourFields(st *deltalog.StructType) []compatField {
	out := make([]compatField, len(st.Fields))
	for i, f := range st.Fields {
		out[i] = compatField{Name: f.Name, Type: typeString(f.Type), Nullable: new(f.Nullable)}
	}
	return out
}

// engineFields is the schema an engine reported. Nested types become their JSON.
func engineFields(fs []fulltier.Field) []compatField {
	out := make([]compatField, len(fs))
	for i, f := range fs {
		typ, ok := f.Type.(string)
		if !ok {
			b, _ := json.Marshal(f.Type)
			typ = string(b)
		}
		out[i] = compatField{Name: f.Name, Type: typ, Nullable: f.Nullable}
	}
	return out
}

func typeString(t deltalog.Type) string {
	switch t.(type) {
	case deltalog.PrimitiveType, deltalog.DecimalType:
		return t.String()
	default:
		b, _ := json.Marshal(t)
		return string(b)
	}
}

// requireSameSchema checks names, types and, where the engine reports it, nullability.
func requireSameSchema(t *testing.T, want, got []compatField, msgAndArgs ...any) {
	t.Helper()
	w, g := slices.Clone(want), slices.Clone(got)
	for i := range g {
		if g[i].Nullable == nil && i < len(w) {
			w[i].Nullable = nil // DuckDB does not report nullability
		}
	}
	require.Equal(t, w, g, msgAndArgs...)
}

// ourRows canonicalizes datafile rows (aligned with st's fields) into sorted JSON lines.
func ourRows(t *testing.T, st *deltalog.StructType, rows [][]any) []string {
	t.Helper()
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		obj := make(map[string]any, len(st.Fields))
		for i, f := range st.Fields {
			v, err := canonicalGo(f.Type, r[i])
			require.NoError(t, err, "column %s", f.Name)
			obj[f.Name] = v
		}
		out = append(out, mustJSON(t, obj))
	}
	slices.Sort(out)
	return out
}

// engineRows normalizes the rows an engine (or an expected.json) reported.
func engineRows(t *testing.T, fields []compatField, rows []map[string]any) []string {
	t.Helper()
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		obj := make(map[string]any, len(fields))
		for _, f := range fields {
			obj[f.Name] = normalizeEngine(f.Type, r[f.Name])
		}
		out = append(out, mustJSON(t, obj))
	}
	slices.Sort(out)
	return out
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// canonicalGo turns one datafile value into deltaread.py's canonical form.
func canonicalGo(typ deltalog.Type, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch tt := typ.(type) {
	case deltalog.DecimalType:
		d, ok := v.(decimal128.Num)
		if !ok {
			return nil, fmt.Errorf("decimal value of type %T", v)
		}
		return d.String(tt.Scale), nil
	case *deltalog.StructType:
		vals, ok := v.([]any)
		if !ok || len(vals) != len(tt.Fields) {
			return nil, fmt.Errorf("struct value of type %T", v)
		}
		obj := map[string]any{}
		for i, f := range tt.Fields {
			c, err := canonicalGo(f.Type, vals[i])
			if err != nil {
				return nil, err
			}
			obj[f.Name] = c
		}
		return obj, nil
	case *deltalog.ArrayType:
		vals, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("array value of type %T", v)
		}
		out := make([]any, len(vals))
		for i, x := range vals {
			c, err := canonicalGo(tt.ElementType, x)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case *deltalog.MapType:
		kvs, ok := v.([]datafile.KV)
		if !ok {
			return nil, fmt.Errorf("map value of type %T", v)
		}
		out := make([]any, 0, len(kvs))
		for _, kv := range kvs {
			k, err := canonicalGo(tt.KeyType, kv.Key)
			if err != nil {
				return nil, err
			}
			x, err := canonicalGo(tt.ValueType, kv.Value)
			if err != nil {
				return nil, err
			}
			out = append(out, map[string]any{"key": k, "value": x})
		}
		slices.SortFunc(out, func(a, b any) int {
			ka, _ := json.Marshal(a.(map[string]any)["key"])
			kb, _ := json.Marshal(b.(map[string]any)["key"])
			return cmp.Compare(string(ka), string(kb))
		})
		return out, nil
	}
	switch typ {
	case deltalog.TypeByte, deltalog.TypeShort, deltalog.TypeInteger, deltalog.TypeLong:
		var n int64
		switch x := v.(type) {
		case int8:
			n = int64(x)
		case int16:
			n = int64(x)
		case int32:
			n = int64(x)
		case int64:
			n = x
		default:
			return nil, fmt.Errorf("%s value of type %T", typ, v)
		}
		return json.Number(strconv.FormatInt(n, 10)), nil
	case deltalog.TypeFloat, deltalog.TypeDouble:
		var f float64
		switch x := v.(type) {
		case float32:
			f = float64(x)
		case float64:
			f = x
		default:
			return nil, fmt.Errorf("%s value of type %T", typ, v)
		}
		return canonicalFloat(f), nil
	case deltalog.TypeBoolean:
		return v.(bool), nil
	case deltalog.TypeString:
		return v.(string), nil
	case deltalog.TypeBinary:
		return hex.EncodeToString(v.([]byte)), nil
	case deltalog.TypeDate:
		return time.Unix(int64(v.(int32))*86400, 0).UTC().Format(time.DateOnly), nil
	case deltalog.TypeTimestamp:
		return time.UnixMicro(v.(int64)).UTC().Format("2006-01-02T15:04:05.000000Z"), nil
	case deltalog.TypeTimestampNTZ:
		return time.UnixMicro(v.(int64)).UTC().Format("2006-01-02T15:04:05.000000"), nil
	}
	return nil, fmt.Errorf("unsupported type %s", typ)
}

func canonicalFloat(f float64) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
}

// normalizeEngine rewrites numbers of an engine's canonical value so that they print
// like canonicalGo's; other values are already canonical text.
func normalizeEngine(typ string, v any) any {
	n, ok := v.(json.Number)
	if !ok {
		return v
	}
	switch typ {
	case "float", "double":
		f, err := n.Float64()
		if err != nil {
			return v
		}
		return canonicalFloat(f)
	case "byte", "short", "integer", "long":
		i, err := n.Int64()
		if err != nil {
			return v
		}
		return json.Number(strconv.FormatInt(i, 10))
	}
	return v
}

// deltalogRead is what deltalog and datafile read from a table.
type deltalogRead struct {
	Snapshot *deltalog.Snapshot
	Fields   []compatField
	Rows     []string
}

// readLocal reads the table in dir with deltalog (+ datafile), at version when not nil.
func readLocal(t *testing.T, dir string, version *int64) deltalogRead {
	t.Helper()
	store, err := localstore.New(localstore.Options{Dir: dir, NoSync: true})
	require.NoError(t, err)
	return readStore(t, store, version)
}

// readStore reads every live row of the table in store through deltalog and datafile.
func readStore(t *testing.T, store deltalog.Store, version *int64) deltalogRead {
	t.Helper()
	ctx := t.Context()
	snap, rows, err := readAll(ctx, store, version)
	require.NoError(t, err)
	return deltalogRead{Snapshot: snap, Fields: ourFields(snap.Schema()), Rows: ourRows(t, snap.Schema(), rows)}
}

func readAll(ctx context.Context, store deltalog.Store, version *int64) (*deltalog.Snapshot, [][]any, error) {
	tbl, err := deltalog.Open(ctx, store)
	if err != nil {
		return nil, nil, err
	}
	var snap *deltalog.Snapshot
	if version != nil {
		snap, err = tbl.SnapshotAt(ctx, *version)
	} else {
		snap, err = tbl.Snapshot(ctx)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("loading snapshot: %w", err)
	}
	meta := snap.Metadata()
	opts := datafile.ReadOptions{Properties: meta.Configuration, PartitionColumns: meta.PartitionColumns}
	var rows [][]any
	for _, add := range snap.Files() {
		rs, err := datafile.Read(ctx, store, &add, snap.Schema(), opts)
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", add.Path, err)
		}
		rows = append(rows, rs...)
	}
	return snap, rows, nil
}

func envOrDefault(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// withoutColumn drops one column from canonical rows, for an engine known to misread it.
func withoutColumn(t *testing.T, rows []string, col string) []string {
	t.Helper()
	out := make([]string, len(rows))
	for i, r := range rows {
		var obj map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(r), &obj))
		delete(obj, col)
		out[i] = mustJSON(t, obj)
	}
	slices.Sort(out)
	return out
}
