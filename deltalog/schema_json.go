package deltalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// ErrInvalidSchema reports a schema that is malformed or violates Delta's rules.
var ErrInvalidSchema = errors.New("deltalog: invalid schema")

// maxDecimalPrecision is the largest decimal precision Delta (and Spark) allow.
const maxDecimalPrecision = 38

// String returns the schema JSON spelling, e.g. "decimal(10,2)".
func (d DecimalType) String() string {
	return "decimal(" + strconv.Itoa(d.Precision) + "," + strconv.Itoa(d.Scale) + ")"
}

// ParseSchema parses a metaData.schemaString (Spark StructType JSON) and validates it.
func ParseSchema(s string) (*StructType, error) {
	var st StructType
	if err := json.Unmarshal([]byte(s), &st); err != nil {
		return nil, err
	}
	if err := st.Validate(); err != nil {
		return nil, err
	}
	return &st, nil
}

// SchemaString returns the schema as the compact JSON string stored in metaData.schemaString.
func (st *StructType) SchemaString() (string, error) {
	b, err := MarshalPlain(st)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// Validate checks Delta's rules: non-empty field names, unique case-insensitively within
// each struct, decimal precision 1..38 with 0 ≤ scale ≤ precision, and no missing types.
func (st *StructType) Validate() error {
	return validateType(st, "")
}

func validateType(t Type, path string) error {
	switch t := t.(type) {
	case nil:
		return fmt.Errorf("%w: %s: missing type", ErrInvalidSchema, pathOrRoot(path))
	case PrimitiveType:
		if !knownPrimitive(t) {
			return fmt.Errorf("%w: %s: unknown type %q", ErrInvalidSchema, pathOrRoot(path), string(t))
		}
	case DecimalType:
		if t.Precision < 1 || t.Precision > maxDecimalPrecision || t.Scale < 0 || t.Scale > t.Precision {
			return fmt.Errorf("%w: %s: %s out of range (precision 1..38, 0 ≤ scale ≤ precision)",
				ErrInvalidSchema, pathOrRoot(path), t)
		}
	case *StructType:
		if t == nil {
			return fmt.Errorf("%w: %s: nil struct", ErrInvalidSchema, pathOrRoot(path))
		}
		seen := make(map[string]string, len(t.Fields))
		for _, f := range t.Fields {
			if f.Name == "" {
				return fmt.Errorf("%w: %s: empty field name", ErrInvalidSchema, pathOrRoot(path))
			}
			fp := joinPath(path, f.Name)
			if prev, dup := seen[strings.ToLower(f.Name)]; dup {
				return fmt.Errorf("%w: %s: duplicate of %q (names are case-insensitive)", ErrInvalidSchema, fp, prev)
			}
			seen[strings.ToLower(f.Name)] = f.Name
			if err := validateType(f.Type, fp); err != nil {
				return err
			}
		}
	case *ArrayType:
		if t == nil {
			return fmt.Errorf("%w: %s: nil array", ErrInvalidSchema, pathOrRoot(path))
		}
		return validateType(t.ElementType, path+".element")
	case *MapType:
		if t == nil {
			return fmt.Errorf("%w: %s: nil map", ErrInvalidSchema, pathOrRoot(path))
		}
		if err := validateType(t.KeyType, path+".key"); err != nil {
			return err
		}
		return validateType(t.ValueType, path+".value")
	default:
		return fmt.Errorf("%w: %s: unsupported type %T", ErrInvalidSchema, pathOrRoot(path), t)
	}
	return nil
}

func pathOrRoot(p string) string {
	if p == "" {
		return "<root>"
	}
	return p
}

func joinPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

func knownPrimitive(p PrimitiveType) bool {
	switch p {
	case TypeString, TypeLong, TypeInteger, TypeShort, TypeByte, TypeFloat, TypeDouble,
		TypeBoolean, TypeBinary, TypeDate, TypeTimestamp, TypeTimestampNTZ:
		return true
	}
	return false
}

// MarshalJSON writes Spark's StructType JSON: {"type":"struct","fields":[...]}.
func (st *StructType) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	if err := writeTypeJSON(&buf, st); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// UnmarshalJSON reads Spark's StructType JSON. Numbers in field metadata are kept as
// json.Number so column mapping ids and unknown values round-trip exactly.
func (st *StructType) UnmarshalJSON(b []byte) error {
	t, err := parseTypeJSON(b, 0)
	if err != nil {
		return err
	}
	s, ok := t.(*StructType)
	if !ok {
		return fmt.Errorf("%w: top level is %s, not struct", ErrInvalidSchema, t)
	}
	*st = *s
	return nil
}

// writeTypeJSON emits keys in Spark's order so our schemaString looks like Spark's.
func writeTypeJSON(buf *bytes.Buffer, t Type) error {
	switch t := t.(type) {
	case PrimitiveType:
		return writeJSONValue(buf, string(t))
	case DecimalType:
		return writeJSONValue(buf, t.String())
	case *StructType:
		buf.WriteString(`{"type":"struct","fields":[`)
		for i, f := range t.Fields {
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.WriteString(`{"name":`)
			if err := writeJSONValue(buf, f.Name); err != nil {
				return err
			}
			buf.WriteString(`,"type":`)
			if err := writeTypeJSON(buf, f.Type); err != nil {
				return fmt.Errorf("field %q: %w", f.Name, err)
			}
			buf.WriteString(`,"nullable":`)
			buf.WriteString(strconv.FormatBool(f.Nullable))
			buf.WriteString(`,"metadata":`)
			md := f.Metadata
			if md == nil {
				md = map[string]any{}
			}
			if err := writeJSONValue(buf, md); err != nil {
				return fmt.Errorf("field %q metadata: %w", f.Name, err)
			}
			buf.WriteByte('}')
		}
		buf.WriteString(`]}`)
	case *ArrayType:
		buf.WriteString(`{"type":"array","elementType":`)
		if err := writeTypeJSON(buf, t.ElementType); err != nil {
			return err
		}
		buf.WriteString(`,"containsNull":`)
		buf.WriteString(strconv.FormatBool(t.ContainsNull))
		buf.WriteByte('}')
	case *MapType:
		buf.WriteString(`{"type":"map","keyType":`)
		if err := writeTypeJSON(buf, t.KeyType); err != nil {
			return err
		}
		buf.WriteString(`,"valueType":`)
		if err := writeTypeJSON(buf, t.ValueType); err != nil {
			return err
		}
		buf.WriteString(`,"valueContainsNull":`)
		buf.WriteString(strconv.FormatBool(t.ValueContainsNull))
		buf.WriteByte('}')
	default:
		return fmt.Errorf("%w: cannot encode type %T", ErrInvalidSchema, t)
	}
	return nil
}

func writeJSONValue(buf *bytes.Buffer, v any) error {
	b, err := MarshalPlain(v)
	if err != nil {
		return err
	}
	buf.Write(b)
	return nil
}

// maxSchemaDepth bounds nesting so hostile input cannot exhaust the stack.
const maxSchemaDepth = 100

type rawField struct {
	Name     *string         `json:"name"`
	Type     json.RawMessage `json:"type"`
	Nullable *bool           `json:"nullable"`
	Metadata json.RawMessage `json:"metadata"`
}

type rawComplex struct {
	Type              string          `json:"type"`
	Fields            []rawField      `json:"fields"`
	ElementType       json.RawMessage `json:"elementType"`
	ContainsNull      *bool           `json:"containsNull"`
	KeyType           json.RawMessage `json:"keyType"`
	ValueType         json.RawMessage `json:"valueType"`
	ValueContainsNull *bool           `json:"valueContainsNull"`
}

func parseTypeJSON(b []byte, depth int) (Type, error) {
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("%w: nesting deeper than %d", ErrInvalidSchema, maxSchemaDepth)
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil, fmt.Errorf("%w: missing type", ErrInvalidSchema)
	}
	if b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidSchema, err)
		}
		return parsePrimitive(s)
	}
	var rc rawComplex
	if err := json.Unmarshal(b, &rc); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidSchema, err)
	}
	switch rc.Type {
	case "struct":
		st := &StructType{Fields: make([]StructField, 0, len(rc.Fields))}
		for i, rf := range rc.Fields {
			if rf.Name == nil {
				return nil, fmt.Errorf("%w: field %d has no name", ErrInvalidSchema, i)
			}
			ft, err := parseTypeJSON(rf.Type, depth+1)
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", *rf.Name, err)
			}
			md, err := parseFieldMetadata(rf.Metadata)
			if err != nil {
				return nil, fmt.Errorf("field %q metadata: %w", *rf.Name, err)
			}
			st.Fields = append(st.Fields, StructField{
				Name:     *rf.Name,
				Type:     ft,
				Nullable: rf.Nullable == nil || *rf.Nullable, // Spark defaults nullable to true
				Metadata: md,
			})
		}
		return st, nil
	case "array":
		et, err := parseTypeJSON(rc.ElementType, depth+1)
		if err != nil {
			return nil, fmt.Errorf("array element: %w", err)
		}
		return &ArrayType{ElementType: et, ContainsNull: rc.ContainsNull == nil || *rc.ContainsNull}, nil
	case "map":
		kt, err := parseTypeJSON(rc.KeyType, depth+1)
		if err != nil {
			return nil, fmt.Errorf("map key: %w", err)
		}
		vt, err := parseTypeJSON(rc.ValueType, depth+1)
		if err != nil {
			return nil, fmt.Errorf("map value: %w", err)
		}
		return &MapType{KeyType: kt, ValueType: vt, ValueContainsNull: rc.ValueContainsNull == nil || *rc.ValueContainsNull}, nil
	default:
		return nil, fmt.Errorf("%w: unknown complex type %q", ErrInvalidSchema, rc.Type)
	}
}

func parseFieldMetadata(b []byte) (map[string]any, error) {
	md := map[string]any{}
	if len(bytes.TrimSpace(b)) == 0 || string(bytes.TrimSpace(b)) == "null" {
		return md, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&md); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidSchema, err)
	}
	return md, nil
}

// parsePrimitive accepts Spark's spellings, plus whitespace inside decimal(p, s).
func parsePrimitive(s string) (Type, error) {
	if rest, ok := strings.CutPrefix(s, "decimal"); ok {
		rest = strings.TrimSpace(rest)
		if rest == "" {
			return DecimalType{Precision: 10, Scale: 0}, nil // Spark's bare "decimal"
		}
		inner, ok := strings.CutPrefix(rest, "(")
		if ok {
			inner, ok = strings.CutSuffix(inner, ")")
		}
		if !ok {
			return nil, fmt.Errorf("%w: bad decimal %q", ErrInvalidSchema, s)
		}
		ps, ss, ok := strings.Cut(inner, ",")
		if !ok {
			return nil, fmt.Errorf("%w: bad decimal %q", ErrInvalidSchema, s)
		}
		p, perr := strconv.Atoi(strings.TrimSpace(ps))
		sc, serr := strconv.Atoi(strings.TrimSpace(ss))
		if perr != nil || serr != nil {
			return nil, fmt.Errorf("%w: bad decimal %q", ErrInvalidSchema, s)
		}
		d := DecimalType{Precision: p, Scale: sc}
		if err := validateType(d, ""); err != nil {
			return nil, err
		}
		return d, nil
	}
	p := PrimitiveType(s)
	if !knownPrimitive(p) {
		return nil, fmt.Errorf("%w: unknown type %q", ErrInvalidSchema, s)
	}
	return p, nil
}

// SameSchemaString reports whether two metaData.schemaString values hold the same
// JSON: equal bytes, or the same value spelled differently, such as "array<string>"
// written with HTML escaping ("array\u003cstring\u003e") by older versions. A schema
// check that compared bytes would otherwise see a change where there is none, and
// commit a metaData action that stops streaming readers.
func SameSchemaString(a, b string) bool {
	if a == b {
		return true
	}
	va, errA := decodeJSONValue(a)
	vb, errB := decodeJSONValue(b)
	return errA == nil && errB == nil && reflect.DeepEqual(va, vb)
}

func decodeJSONValue(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}
