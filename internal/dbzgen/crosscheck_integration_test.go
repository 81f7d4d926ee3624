//go:build integration

package dbzgen

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkedin/goavro/v2"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// TestCrossCheckWithFastavro encodes key and value data with the generator and
// checks, for each schema, that fastavro (scripts/py/avro_crosscheck.py)
// writes the same bytes from the same datum, that goavro decodes what
// fastavro wrote to what it decodes from ours, and that fastavro reads our
// bytes back to the datum.
func TestCrossCheckWithFastavro(t *testing.T) {
	connect := DefaultOptions()
	connect.Layout, connect.TimePrecision, connect.DecimalHandling, connect.BinaryHandling = Layout27, TimeConnect, DecimalString, BinaryHex
	micro := DefaultOptions()
	micro.Layout, micro.TimePrecision, micro.DecimalHandling, micro.BinaryHandling = Layout26, TimeAdaptiveMicroseconds, DecimalDouble, BinaryBase64
	micro.PropagateSourceTypes = true
	v25 := DefaultOptions()
	v25.Layout = Layout25

	cases := []struct {
		name string
		opts Options
		def  TableDef
	}{
		{"every type 3.x", DefaultOptions(), EveryType()},
		{"every type 2.5", v25, EveryType()},
		{"every type 2.7 connect string hex", connect, EveryType()},
		{"every type 2.6 micro double base64 propagated", micro, EveryType()},
		{"orders 3.x", DefaultOptions(), Orders()},
		{"customers 2.5", v25, Customers()},
		{"SQL defaults, union default first", DefaultOptions(), TableDef{Database: "sales", Schema: "dbo", Name: "defaults", Key: []string{"id"}, Columns: []Column{
			{Name: "id", Type: "bigint"},
			{Name: "qty", Type: "int", Nullable: true, Default: 0},
			{Name: "state", Type: "varchar(10)", Nullable: true, Default: "new"},
			{Name: "level", Type: "smallint", Default: 3},
			{Name: "ratio", Type: "float", Nullable: true, Default: 0.5},
		}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			gen := New(nil, tc.opts)
			tab, err := gen.Table(tc.def)
			require.NoError(t, err)
			events := crossCheckEvents(t, tab)

			var keys, values []any
			for _, ev := range events {
				k, err := tab.keyNative(ev.keyImage())
				require.NoError(t, err)
				keys = append(keys, k)
				if !ev.Tombstone {
					v, err := tab.valueNative(ev)
					require.NoError(t, err)
					values = append(values, v)
				}
			}
			crossCheck(t, tab.KeySchema(), tab.keyCodec, keys)
			crossCheck(t, tab.ValueSchema(), tab.valueCodec, values)
		})
	}
}

// crossCheckEvents is the boundary row (every-type table) or a first row,
// then a workload with a snapshot, transactions and deletes.
func crossCheckEvents(t *testing.T, tab *Table) []Event {
	w, err := NewWorkload(WorkloadOptions{Seed: 11, Keys: 15, Snapshot: true, MaxTxEvents: 3, TransactionMetadata: true, DeleteRatio: 0.2}, tab)
	require.NoError(t, err)
	var evs []Event
	if tab.def.Name == "all_types" {
		evs = append(evs, Event{Table: tab, Op: OpCreate, After: EveryTypeRow(),
			Source: Source{Time: w.opts.Start, CommitLSN: MakeLSN(1, 2, 3), ChangeLSN: MakeLSN(1, 2, 1), SerialNo: 1}})
	}
	for range 120 {
		evs = append(evs, w.Next())
	}
	return evs
}

func crossCheck(t *testing.T, schema string, codec *goavro.Codec, data []any) {
	t.Helper()
	dir := t.TempDir()
	schemaFile := filepath.Join(dir, "schema.json")
	require.NoError(t, os.WriteFile(schemaFile, []byte(schema), 0o644))
	var parsed any
	require.NoError(t, json.Unmarshal([]byte(schema), &parsed))
	names := map[string]any{}
	collectNames(parsed, "", names)

	var datums, bodies []string
	var ours [][]byte
	var longer []int // bytes fastavro writes beyond ours, per datum
	for _, d := range data {
		w := &walker{names: names}
		j, err := w.json(parsed, d, "")
		require.NoError(t, err)
		b, err := json.Marshal(j)
		require.NoError(t, err)
		datums = append(datums, string(b))
		longer = append(longer, w.fastavroLonger)
		body, err := codec.BinaryFromNative(nil, d)
		require.NoError(t, err)
		ours = append(ours, body)
		bodies = append(bodies, hex.EncodeToString(body))
	}
	dataFile := filepath.Join(dir, "data.jsonl")
	require.NoError(t, os.WriteFile(dataFile, []byte(strings.Join(datums, "\n")), 0o644))
	hexFile := filepath.Join(dir, "bodies.txt")
	require.NoError(t, os.WriteFile(hexFile, []byte(strings.Join(bodies, "\n")), 0o644))

	written := strings.Fields(fulltier.Python(t, "avro_crosscheck.py", "write", schemaFile, dataFile))
	require.Len(t, written, len(data))
	for i, h := range written {
		theirs, err := hex.DecodeString(h)
		require.NoError(t, err)
		if longer[i] > 0 {
			// fastavro sizes a negative decimal by its magnitude, so
			// -2^(8k-1) (money's minimum, -128, ...) gets one more 0xff byte
			// than Java's BigInteger.toByteArray, which the Confluent
			// converter and goavro write. Both decode alike (checked below).
			require.Len(t, theirs, len(ours[i])+longer[i], "datum %d", i)
		} else if !bytes.Equal(ours[i], theirs) {
			at := 0
			for at < len(ours[i]) && at < len(theirs) && ours[i][at] == theirs[at] {
				at++
			}
			from := max(0, at-16)
			t.Fatalf("datum %d differs at byte %d of %d/%d:\nfastavro ...%x\ngoavro   ...%x\ndatum %.2000s",
				i, at, len(theirs), len(ours[i]), theirs[from:min(len(theirs), at+32)], ours[i][from:min(len(ours[i]), at+32)], datums[i])
		}
		fromTheirs, rest, err := codec.NativeFromBinary(theirs)
		require.NoError(t, err)
		require.Empty(t, rest)
		fromOurs, _, err := codec.NativeFromBinary(ours[i])
		require.NoError(t, err)
		require.Equal(t, fmt.Sprint(fromOurs), fmt.Sprint(fromTheirs), "datum %d decoded", i)
	}

	read := strings.Split(strings.TrimSpace(fulltier.Python(t, "avro_crosscheck.py", "read", schemaFile, hexFile)), "\n")
	require.Len(t, read, len(data))
	for i, line := range read {
		require.JSONEq(t, datums[i], line, "fastavro read datum %d", i)
	}
}

// walker turns a goavro native datum into avro_crosscheck.py's JSON
// conventions, walking the schema to tell unions from records: unions
// unwrapped, bytes {"$bytes": hex}, decimals {"$decimal": text}.
type walker struct {
	names map[string]any
	// fastavroLonger counts decimals that fastavro encodes one byte longer.
	fastavroLonger int
}

func (w *walker) json(schema, v any, ns string) (any, error) {
	names := w.names
	switch s := schema.(type) {
	case string:
		if named, ok := names[fullName(s, ns)]; ok {
			return w.json(named, v, ns)
		}
		return primitiveJSON(s, v), nil
	case []any:
		if v == nil {
			return nil, nil
		}
		u, ok := v.(map[string]any)
		if !ok || len(u) != 1 {
			return nil, fmt.Errorf("union value %T", v)
		}
		for branch, inner := range u {
			for _, member := range s {
				if branchName(member, ns, names) == branch {
					return w.json(member, inner, ns)
				}
			}
			return nil, fmt.Errorf("no union member %q", branch)
		}
	case map[string]any:
		typ, _ := s["type"].(string)
		if typ != "record" {
			if s["logicalType"] == "decimal" {
				scale := int(s["scale"].(float64))
				r := v.(*big.Rat)
				unscaled := new(big.Int).Mul(r.Num(), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil))
				unscaled.Quo(unscaled, r.Denom())
				if unscaled.Sign() < 0 {
					abs := new(big.Int).Neg(unscaled)
					if abs.BitLen()%8 == 0 && abs.TrailingZeroBits() == uint(abs.BitLen()-1) {
						w.fastavroLonger++
					}
				}
				return map[string]any{"$decimal": r.FloatString(scale)}, nil
			}
			return primitiveJSON(typ, v), nil
		}
		if n, ok := s["namespace"].(string); ok {
			ns = n
		}
		full := fullName(s["name"].(string), ns)
		rec, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("record %s value %T", full, v)
		}
		out := map[string]any{}
		for _, f := range s["fields"].([]any) {
			f := f.(map[string]any)
			name := f["name"].(string)
			j, err := w.json(f["type"], rec[name], ns)
			if err != nil {
				return nil, fmt.Errorf("%s.%s: %w", full, name, err)
			}
			out[name] = j
		}
		return out, nil
	}
	return nil, fmt.Errorf("schema node %T", schema)
}

func primitiveJSON(typ string, v any) any {
	switch x := v.(type) {
	case []byte:
		return map[string]any{"$bytes": hex.EncodeToString(x)}
	case float32:
		return float64(x) // print the float32's exact value, as Python does
	}
	return v
}

func fullName(name, ns string) string {
	if strings.Contains(name, ".") || ns == "" {
		return name
	}
	return ns + "." + name
}

// branchName is goavro's name for a union member.
func branchName(member any, ns string, names map[string]any) string {
	switch m := member.(type) {
	case string:
		if _, ok := names[fullName(m, ns)]; ok {
			return fullName(m, ns)
		}
		return m
	case map[string]any:
		if m["type"] == "record" {
			if n, ok := m["namespace"].(string); ok {
				ns = n
			}
			return fullName(m["name"].(string), ns)
		}
		if lt, ok := m["logicalType"].(string); ok {
			return m["type"].(string) + "." + lt
		}
		return m["type"].(string)
	}
	return ""
}

// collectNames records every named type of a schema, so by-name references
// resolve even when the datum never walks the definition (a null before).
func collectNames(schema any, ns string, names map[string]any) {
	switch s := schema.(type) {
	case []any:
		for _, m := range s {
			collectNames(m, ns, names)
		}
	case map[string]any:
		if s["type"] != "record" {
			return
		}
		if n, ok := s["namespace"].(string); ok {
			ns = n
		}
		names[fullName(s["name"].(string), ns)] = s
		for _, f := range s["fields"].([]any) {
			collectNames(f.(map[string]any)["type"], ns, names)
		}
	}
}
