package dbzgen

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// DecimalFormat is JsonConverter's decimal.format.
type DecimalFormat string

// Decimal formats of Kafka's JsonConverter (KIP-481).
const (
	DecimalBase64  DecimalFormat = "BASE64" // the default: unscaled two's complement, base64
	DecimalNumeric DecimalFormat = "NUMERIC"
)

// EncodeJSON returns the Kafka key and value Debezium would produce for ev
// through Kafka's JsonConverter with schemas.enable=true, the form used when
// no registry is involved. It needs no registry.
//
// The Connect schema is recovered from the Avro schema as Confluent's
// AvroData.toConnectSchema does (int with connect.type int8/int16, [null, T]
// as optional, connect.name/version/parameters, decimal scale and
// precision as parameters), and written as JsonConverter.asJsonSchema does
// ("type", "optional", "name", "version", "default", "parameters"; struct "fields"
// with "field"; array "items"; map "keys"/"values"). Values follow
// JsonConverter.convertToJson: numbers for integers and floats (Jackson
// writes non-finite floats as "NaN"/"Infinity"/"-Infinity" strings), base64
// for bytes, Decimal as base64 of BigInteger.toByteArray or, under
// DecimalNumeric, as a plain number; a record is {"schema": S, "payload": P}.
// A tombstone's value is nil, as fromConnectData returns for a null value.
func (g *Generator) EncodeJSON(ev Event, format DecimalFormat) (key, value []byte, err error) {
	if ev.Marker != nil {
		native := markerNative(ev.Marker, g.opts.Layout)
		key, err = ConnectJSON(txKeySchema(g.opts.Layout), map[string]any{"id": ev.Marker.ID}, format)
		if err != nil {
			return nil, nil, err
		}
		value, err = ConnectJSON(txValueSchema(g.opts.Layout), native, format)
		return key, value, err
	}
	t := ev.Table
	if t == nil {
		return nil, nil, fmt.Errorf("%w: no table", ErrBadEvent)
	}
	if ev.Op != OpTruncate && len(t.key) > 0 {
		native, err := t.keyNative(ev.keyImage())
		if err != nil {
			return nil, nil, fmt.Errorf("encoding key of %s: %w", t.topic, err)
		}
		if key, err = ConnectJSON(t.keySchema, native, format); err != nil {
			return nil, nil, fmt.Errorf("encoding key of %s: %w", t.topic, err)
		}
	}
	if ev.Tombstone {
		return key, nil, nil
	}
	native, err := t.valueNative(ev)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding %c event of %s: %w", ev.Op, t.topic, err)
	}
	if value, err = ConnectJSON(t.valueSchema, native, format); err != nil {
		return nil, nil, fmt.Errorf("encoding %c event of %s: %w", ev.Op, t.topic, err)
	}
	return key, value, nil
}

// connectMessage renders a goavro native of an Avro schema (a JSON text or
// an object) as a schemas.enable=true JsonConverter message.
func ConnectJSON(avroSchema any, native any, format DecimalFormat) ([]byte, error) {
	text, ok := avroSchema.(string)
	if !ok {
		b, err := json.Marshal(avroSchema)
		if err != nil {
			return nil, err
		}
		text = string(b)
	}
	var schema any
	if err := json.Unmarshal([]byte(text), &schema); err != nil {
		return nil, err
	}
	w := &connectWriter{names: map[string]map[string]any{}, format: format}
	s, p, err := w.convert(schema, native, "")
	if err != nil {
		return nil, err
	}
	return json.Marshal(object{}.set("schema", s).set("payload", p))
}

type connectWriter struct {
	names  map[string]map[string]any
	format DecimalFormat
}

// convert returns the Connect schema and the JSON value of native.
func (w *connectWriter) convert(schema, native any, ns string) (object, any, error) {
	optional := false
	if u, ok := schema.([]any); ok {
		var rest []any
		for _, b := range u {
			if b == "null" {
				optional = true
			} else {
				rest = append(rest, b)
			}
		}
		if len(rest) != 1 {
			return nil, nil, fmt.Errorf("union %v is not [null, T]", u)
		}
		schema = rest[0]
		if m, ok := native.(map[string]any); ok && len(m) == 1 {
			for _, v := range m {
				native = v // goavro's union wrapper
			}
		}
	}
	props, _ := schema.(map[string]any)
	prim, _ := schema.(string)
	if props != nil {
		if t, ok := props["type"].(map[string]any); ok { // {"type": {...}} nesting
			props = t
		}
		prim, _ = props["type"].(string)
	} else if def := w.lookup(prim, ns); def != nil {
		props, prim = def, "record"
	}
	typ := map[string]string{"boolean": "boolean", "int": "int32", "long": "int64", "float": "float",
		"double": "double", "string": "string", "bytes": "bytes", "record": "struct", "array": "array", "map": "map"}[prim]
	if typ == "" {
		return nil, nil, fmt.Errorf("avro type %q has no connect form", prim)
	}
	if ct, ok := props["connect.type"].(string); ok {
		typ = ct
	}
	s := object{}.set("type", typ)
	var payload any = native
	var params map[string]any
	if p, ok := props["connect.parameters"].(map[string]any); ok {
		params = p
	}
	name, _ := props["connect.name"].(string)
	switch prim {
	case "record":
		full := recordFullName(props, ns)
		w.names[full] = props
		if name == "" {
			name = full
		}
		recNS := full[:max(strings.LastIndexByte(full, '.'), 0)]
		rec, _ := native.(map[string]any)
		var fields []any
		out := object{}
		for _, f := range props["fields"].([]any) {
			fm := f.(map[string]any)
			fname := fm["name"].(string)
			fs, fv, err := w.convert(fm["type"], rec[fname], recNS)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", fname, err)
			}
			fields = append(fields, append(fs, member{"field", fname}))
			out = out.set(fname, fv)
		}
		s = s.set("fields", fields)
		payload = out
		if native == nil {
			payload = nil
		}
	case "array":
		items, _ := native.([]any)
		is, _, err := w.convert(props["items"], nil, ns)
		if err != nil {
			return nil, nil, err
		}
		out := make([]any, len(items))
		for i, it := range items {
			if _, out[i], err = w.convert(props["items"], it, ns); err != nil {
				return nil, nil, err
			}
		}
		s = s.set("items", is)
		payload = out
		if native == nil {
			payload = nil
		}
	case "bytes":
		if props["logicalType"] == "decimal" {
			scale, _ := props["scale"].(float64)
			if params == nil {
				params = map[string]any{}
			}
			params["scale"] = strconv.Itoa(int(scale))
			if p, ok := props["precision"].(float64); ok {
				params["connect.decimal.precision"] = strconv.Itoa(int(p))
			}
			switch v := native.(type) {
			case *big.Rat:
				unscaled := new(big.Int).Mul(v.Num(), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil))
				unscaled.Quo(unscaled, v.Denom())
				payload = w.decimal(unscaled, int(scale))
			case []byte:
				unscaled := new(big.Int).SetBytes(v)
				if len(v) > 0 && v[0]&0x80 != 0 {
					unscaled.Sub(unscaled, new(big.Int).Lsh(big.NewInt(1), uint(8*len(v))))
				}
				payload = w.decimal(unscaled, int(scale))
			}
		} else if b, ok := native.([]byte); ok {
			payload = base64.StdEncoding.EncodeToString(b)
		}
	case "float", "double":
		var f float64
		switch v := native.(type) {
		case float32:
			f = float64(v)
		case float64:
			f = v
		}
		switch {
		case math.IsNaN(f):
			payload = "NaN"
		case math.IsInf(f, 1):
			payload = "Infinity"
		case math.IsInf(f, -1):
			payload = "-Infinity"
		}
	}
	s = s.set("optional", optional)
	if name != "" {
		s = s.set("name", name)
	}
	if v, ok := props["connect.version"]; ok {
		s = s.set("version", v)
	}
	if d, ok := props["connect.default"]; ok {
		// asJsonSchema writes the schema's default value: the source
		// block's snapshot enum ("false") and column defaults, which
		// dbzgen supports for booleans, numbers and strings only, whose
		// JSON form is the Avro default's.
		s = s.set("default", d)
	}
	if params != nil {
		s = s.set("parameters", params)
	}
	return s, payload, nil
}

// decimal renders an unscaled decimal as decimal.format says.
func (w *connectWriter) decimal(unscaled *big.Int, scale int) any {
	if w.format == DecimalNumeric {
		r := new(big.Rat).SetFrac(unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil))
		return json.Number(r.FloatString(scale))
	}
	return base64.StdEncoding.EncodeToString(javaBytes(unscaled))
}

// javaBytes is BigInteger.toByteArray: minimal two's complement, big endian.
func javaBytes(v *big.Int) []byte {
	n := v.BitLen()/8 + 1
	b := make([]byte, n)
	if v.Sign() >= 0 {
		return v.FillBytes(b)
	}
	// Two's complement of a negative value: 2^(8n) + v.
	t := new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), uint(8*n)), v)
	t.FillBytes(b)
	for len(b) > 1 && b[0] == 0xff && b[1]&0x80 != 0 {
		b = b[1:]
	}
	return b
}

func (w *connectWriter) lookup(name, ns string) map[string]any {
	if def := w.names[name]; def != nil {
		return def
	}
	return w.names[ns+"."+name]
}

func recordFullName(rec map[string]any, ns string) string {
	name, _ := rec["name"].(string)
	if strings.Contains(name, ".") {
		return name
	}
	if s, ok := rec["namespace"].(string); ok {
		ns = s
	}
	if ns == "" {
		return name
	}
	return ns + "." + name
}
