package codecs

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
)

// jsonSeeds are JsonConverter records of every SQL Server type, decimals in
// both formats, plus the ones under testdata/json.
func jsonSeeds(f *testing.F) [][2][]byte {
	g := dbzgen.New(nil, dbzgen.Options{PropagateSourceTypes: true})
	every, err := g.Table(dbzgen.EveryType())
	if err != nil {
		f.Fatal(err)
	}
	orders, err := g.Table(dbzgen.Orders())
	if err != nil {
		f.Fatal(err)
	}
	w, err := dbzgen.NewWorkload(dbzgen.WorkloadOptions{Seed: 1, Keys: 3, Snapshot: true, TransactionMetadata: true, Placeholders: 0.5}, every, orders)
	if err != nil {
		f.Fatal(err)
	}
	events := []dbzgen.Event{{Table: every, Op: dbzgen.OpCreate, After: dbzgen.EveryTypeRow(),
		Source: dbzgen.Source{Time: time.UnixMilli(1710498645130), CommitLSN: dbzgen.MakeLSN(0x2b, 0xe10, 5)}}}
	for range 12 {
		events = append(events, w.Next())
	}
	var seeds [][2][]byte
	for i, ev := range events {
		format := dbzgen.DecimalBase64
		if i%2 == 1 {
			format = dbzgen.DecimalNumeric
		}
		key, value, err := g.EncodeJSON(ev, format)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, [2][]byte{key, value})
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "json", "*.value.json"))
	for _, vf := range files {
		value, verr := os.ReadFile(vf)
		key, kerr := os.ReadFile(vf[:len(vf)-len(".value.json")] + ".key.json")
		if err := errors.Join(verr, kerr); err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, [2][]byte{bytes.TrimSpace(key), bytes.TrimSpace(value)})
	}
	return seeds
}

// FuzzDecodeJSONChange decodes JsonConverter records with the hand-written
// scanner and again with encoding/json plus a reference reading of the
// Connect schema written for this test: both must accept the same records
// and give the same op, table, row and key. Errors of the envelope's
// content (LSNs, ops, keys missing from the row), which happen after
// parsing, are left out of the comparison.
func FuzzDecodeJSONChange(f *testing.F) {
	for _, s := range jsonSeeds(f) {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, key, value []byte) {
		if len(key)+len(value) > 1<<16 {
			return
		}
		// A new decoder per input keeps coverage a function of the input
		// (the fuzzer discards inputs whose coverage changes on a re-run);
		// the second decode reads the schemas from the cache.
		d, err := NewDecoder(nil, Options{Converter: ConverterJSON})
		if err != nil {
			t.Fatal(err)
		}
		ch, err := d.Decode(t.Context(), key, value)
		again, err2 := d.Decode(t.Context(), key, value)
		if (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error() {
			t.Fatalf("decoding twice: %v, then %v", err, err2)
		}
		if err == nil && !reflect.DeepEqual(ch, again) && !sameNaN(refChange{row: ch.Row}, refChange{row: again.Row}) {
			t.Fatalf("decoding twice: %+v, then %+v", ch, again)
		}
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("not a DecodeError: %v", err)
			}
			if !sentinelOf(err) {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
		}
		if (len(value) > 0 && !json.Valid(value) || len(key) > 0 && !json.Valid(key)) && err == nil {
			t.Fatalf("accepted invalid JSON")
		}
		want, refErr := refJSONChange(d, key, value)
		switch {
		case refErr == errRefSkip:
		case err == nil && refErr != nil:
			t.Fatalf("decoded, but the reference refuses: %v", refErr)
		case err != nil && refErr == nil && errors.Is(err, ErrBadBody):
			t.Fatalf("the reference decodes, but: %v", err)
		case err == nil:
			got := refChange{op: ch.Op, table: ch.Table, row: ch.Row, key: ch.Key}
			if !reflect.DeepEqual(want, got) && !sameNaN(want, got) {
				t.Fatalf("decoded %+v, the reference %+v", got, want)
			}
		}
	})
}

func sentinelOf(err error) bool {
	for _, s := range decodeSentinels {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// sameNaN compares again with NaN equal to NaN.
func sameNaN(a, b refChange) bool {
	norm := func(r refChange) refChange {
		row := append([]any(nil), r.row...)
		for i, v := range row {
			if f, ok := v.(float64); ok && math.IsNaN(f) {
				row[i] = "NaN"
			}
			if f, ok := v.(float32); ok && math.IsNaN(float64(f)) {
				row[i] = "NaN"
			}
		}
		r.row = row
		return r
	}
	return reflect.DeepEqual(norm(a), norm(b))
}

type refChange struct {
	op    Op
	table TableID
	row   []any
	key   []any
}

var (
	errRefSkip = errors.New("not modelled by the reference")
	errRef     = errors.New("refused by the reference")
)

// refJSONChange is the reference: encoding/json parses the record, and the
// values are read from the Connect schema as Kafka's JsonConverter does
// (convertToConnect), into the natives the shared column conversion takes.
func refJSONChange(d *Decoder, key, value []byte) (refChange, error) {
	var out refChange
	withKey := func() (refChange, error) {
		if len(key) == 0 {
			return out, nil
		}
		kv, kfields, err := refMessage(key)
		if err != nil {
			return out, err
		}
		if kv == nil {
			return out, errRefSkip
		}
		out.key, err = refRow(d, kfields, kv, true)
		return out, err
	}
	if len(value) == 0 {
		out.op = OpTombstone
		return withKey()
	}
	payload, fields, err := refMessage(value)
	if err != nil {
		return out, err
	}
	if payload == nil {
		out.op = OpTombstone
		return withKey()
	}
	p, ok := payload.(map[string]any)
	if !ok {
		return out, errRef
	}
	env := map[string]map[string]any{}
	for _, f := range fields {
		fm, _ := f.(map[string]any)
		name, _ := fm["field"].(string)
		env[name] = fm
	}
	if env["op"] == nil || env["source"] == nil {
		return out, errRefSkip
	}
	op, ok := p["op"].(string)
	if _, present := p["op"]; present && !ok {
		return out, errRef // op must be a string
	}
	// The table's name is read from the source block as the converter
	// gives it: fields the block's schema does not declare are dropped.
	var src map[string]any
	for _, block := range []string{"source", "transaction"} {
		if v, present := p[block]; present && env[block] != nil {
			conv, err := refValue(env[block], v)
			if err != nil {
				return out, err
			}
			if block == "source" {
				src, _ = conv.(map[string]any)
			}
		}
	}
	if len(op) != 1 {
		return out, errRefSkip
	}
	out.op = Op(op[0])
	image := "after"
	switch out.op {
	case OpCreate, OpRead, OpUpdate:
	case OpDelete:
		image = "before"
	default:
		return out, errRefSkip
	}
	out.table.Database, _ = src["db"].(string)
	out.table.Schema, _ = src["schema"].(string)
	out.table.Table, _ = src["table"].(string)
	row, present := p[image]
	if !present || row == nil || env[image] == nil {
		return out, errRefSkip
	}
	rowFields, _ := env[image]["fields"].([]any)
	if out.row, err = refRow(d, rowFields, row, false); err != nil {
		return out, err
	}
	return withKey()
}

// refMessage parses {"schema": S, "payload": P} and returns P and S's
// fields; a nil P for a null message.
func refMessage(b []byte) (any, []any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var top any
	if err := dec.Decode(&top); err != nil || dec.More() {
		return nil, nil, errRef
	}
	if !json.Valid(b) {
		return nil, nil, errRef
	}
	m, ok := top.(map[string]any)
	if !ok || len(m) != 2 {
		return nil, nil, errRef
	}
	schema, hasS := m["schema"]
	payload, hasP := m["payload"]
	if !hasS || !hasP {
		return nil, nil, errRef
	}
	if schema == nil {
		if payload == nil {
			return nil, nil, nil
		}
		return nil, nil, errRef
	}
	sm, ok := schema.(map[string]any)
	if !ok || sm["type"] != "struct" {
		return nil, nil, errRefSkip
	}
	fields, _ := sm["fields"].([]any)
	return payload, fields, nil
}

// refRow reads a row struct's values and converts them as the decoder
// would; the layout is the reference's own reading of the fields.
func refRow(d *Decoder, fields []any, v any, isKey bool) ([]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errRef
	}
	l := &Layout{}
	vals := make([]any, len(fields))
	for i, f := range fields {
		fm, _ := f.(map[string]any)
		name, _ := fm["field"].(string)
		n, err := refValue(fm, m[name])
		if err != nil {
			return nil, err
		}
		vals[i] = n
		node, err := connectNode(fm, 0)
		if err != nil {
			return nil, errRefSkip
		}
		col, err := deriveColumn(avroField(jfield{name: name, node: node}), &d.opts)
		if err != nil {
			return nil, errRefSkip
		}
		l.Columns = append(l.Columns, col)
	}
	if isKey {
		if err := d.finishKey(&compiled{layout: l}, vals); err != nil {
			return nil, errRefSkip
		}
		return vals, nil
	}
	unavailable, err := d.convertRow(l, vals)
	if err != nil {
		return nil, errRefSkip // a conversion error, not a parsing one
	}
	_ = unavailable
	return vals, nil
}

// refValue converts one JSON value (encoding/json's, numbers as
// json.Number) of Connect schema s into its native.
func refValue(s map[string]any, v any) (any, error) {
	if v == nil {
		if opt, _ := s["optional"].(bool); !opt {
			return nil, errRef
		}
		return nil, nil
	}
	name, _ := s["name"].(string)
	switch s["type"] {
	case "boolean":
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case "int8", "int16", "int32", "int64":
		n, ok := v.(json.Number)
		if !ok {
			return nil, errRef
		}
		bits := 32
		if s["type"] == "int64" {
			bits = 64
		}
		i, err := strconv.ParseInt(string(n), 10, bits)
		if err != nil {
			return nil, errRef
		}
		if bits == 32 {
			return int32(i), nil
		}
		return i, nil
	case "float", "double":
		bits := 32
		if s["type"] == "double" {
			bits = 64
		}
		var f float64
		switch x := v.(type) {
		case json.Number:
			var err error
			if f, err = strconv.ParseFloat(string(x), bits); err != nil {
				return nil, errRef
			}
		case string:
			switch x {
			case "NaN":
				f = math.NaN()
			case "Infinity":
				f = math.Inf(1)
			case "-Infinity":
				f = math.Inf(-1)
			default:
				return nil, errRef
			}
		default:
			return nil, errRef
		}
		if bits == 32 {
			return float32(f), nil
		}
		return f, nil
	case "string":
		if str, ok := v.(string); ok {
			return str, nil
		}
	case "bytes":
		if n, ok := v.(json.Number); ok && name == nameDecimal {
			params, _ := s["parameters"].(map[string]any)
			sc, _ := params["scale"].(string)
			scale, err := strconv.Atoi(sc)
			if err != nil || scale < 0 || scale > 38 {
				return nil, errRefSkip // the decoder refuses the schema
			}
			// The decoder's rule: a non-zero mantissa with an exponent
			// beyond ±80 is refused (and big.Rat would take forever).
			mant, exp, hasExp := strings.Cut(strings.ToLower(string(n)), "e")
			if hasExp && strings.Trim(mant, "-0.") != "" {
				if e, err := strconv.Atoi(exp); err != nil || e > 80 || e < -80 {
					return nil, errRef
				}
			} else if hasExp {
				n = "0"
			}
			r, ok := new(big.Rat).SetString(string(n))
			if !ok {
				return nil, errRef
			}
			r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
			if !r.IsInt() || r.Num().BitLen() > 127 {
				return nil, errRef
			}
			return refTwos(r.Num()), nil
		}
		str, ok := v.(string)
		if !ok {
			return nil, errRef
		}
		b, err := base64.StdEncoding.DecodeString(str)
		if err != nil {
			return nil, errRef
		}
		return b, nil
	case "struct":
		m, ok := v.(map[string]any)
		if !ok {
			return nil, errRef
		}
		out := map[string]any{}
		fields, _ := s["fields"].([]any)
		for _, f := range fields {
			fm, _ := f.(map[string]any)
			fname, _ := fm["field"].(string)
			n, err := refValue(fm, m[fname])
			if err != nil {
				return nil, err
			}
			out[fname] = n
		}
		return out, nil
	case "array":
		a, ok := v.([]any)
		if !ok {
			return nil, errRef
		}
		items, _ := s["items"].(map[string]any)
		for _, x := range a {
			if _, err := refValue(items, x); err != nil {
				return nil, err
			}
		}
		return a, nil
	default:
		return nil, errRefSkip
	}
	return nil, errRef
}

// refTwos is the 16-byte two's complement of a value within 127 bits.
func refTwos(v *big.Int) []byte {
	t := new(big.Int).Set(v)
	if t.Sign() < 0 {
		t.Add(t, new(big.Int).Lsh(big.NewInt(1), 128))
	}
	return t.FillBytes(make([]byte, 16))
}
