package catalog

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// HiveType is t as Hive, Glue and Athena write column types: "bigint",
// "decimal(18,2)", "array<string>", "struct<a:int,b:string>". Hive has no
// timestamp without time zone: timestamp_ntz becomes "timestamp" (engines
// that read Delta take the exact type from the log).
func HiveType(t deltalog.Type) string {
	switch t := t.(type) {
	case deltalog.PrimitiveType:
		switch t {
		case deltalog.TypeLong:
			return "bigint"
		case deltalog.TypeInteger:
			return "int"
		case deltalog.TypeShort:
			return "smallint"
		case deltalog.TypeByte:
			return "tinyint"
		case deltalog.TypeTimestampNTZ:
			return "timestamp"
		}
		return string(t)
	case deltalog.DecimalType:
		return fmt.Sprintf("decimal(%d,%d)", t.Precision, t.Scale)
	case *deltalog.ArrayType:
		return "array<" + HiveType(t.ElementType) + ">"
	case *deltalog.MapType:
		return "map<" + HiveType(t.KeyType) + "," + HiveType(t.ValueType) + ">"
	case *deltalog.StructType:
		var b strings.Builder
		b.WriteString("struct<")
		for i, f := range t.Fields {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(f.Name + ":" + HiveType(f.Type))
		}
		b.WriteByte('>')
		return b.String()
	}
	return fmt.Sprint(t)
}

// ParseHiveType reads a type HiveType writes (and the aliases Hive
// accepts: integer, long, string types with lengths) back into a Delta
// type. "timestamp" reads as timestamp.
func ParseHiveType(s string) (deltalog.Type, error) {
	p := hiveParser{s: strings.ToLower(strings.TrimSpace(s))}
	t, err := p.typ()
	if err == nil && p.i < len(p.s) {
		err = fmt.Errorf("unexpected %q", p.s[p.i:])
	}
	if err != nil {
		return nil, fmt.Errorf("catalog: reading column type %q: %w", s, err)
	}
	return t, nil
}

type hiveParser struct {
	s string
	i int
}

func (p *hiveParser) word() string {
	start := p.i
	for p.i < len(p.s) && (p.s[p.i] == '_' || p.s[p.i] >= 'a' && p.s[p.i] <= 'z' || p.s[p.i] >= '0' && p.s[p.i] <= '9') {
		p.i++
	}
	return p.s[start:p.i]
}

func (p *hiveParser) eat(c byte) error {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
	if p.i >= len(p.s) || p.s[p.i] != c {
		return fmt.Errorf("expected %q at %d", c, p.i)
	}
	p.i++
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
	return nil
}

func (p *hiveParser) peek(c byte) bool { return p.i < len(p.s) && p.s[p.i] == c }

// until reads up to (not including) the first byte of stop.
func (p *hiveParser) until(stop string) string {
	start := p.i
	for p.i < len(p.s) && !strings.ContainsRune(stop, rune(p.s[p.i])) {
		p.i++
	}
	return strings.TrimSpace(p.s[start:p.i])
}

func (p *hiveParser) typ() (deltalog.Type, error) {
	w := p.word()
	switch w {
	case "bigint", "long":
		return deltalog.TypeLong, nil
	case "int", "integer":
		return deltalog.TypeInteger, nil
	case "smallint", "short":
		return deltalog.TypeShort, nil
	case "tinyint", "byte":
		return deltalog.TypeByte, nil
	case "string", "varchar", "char":
		if p.peek('(') { // varchar(n), char(n): a string to Delta
			p.until(")")
			if err := p.eat(')'); err != nil {
				return nil, err
			}
		}
		return deltalog.TypeString, nil
	case "float", "double", "boolean", "binary", "date", "timestamp", "timestamp_ntz":
		return deltalog.PrimitiveType(w), nil
	case "decimal":
		d := deltalog.DecimalType{Precision: 10}
		if !p.peek('(') {
			return d, nil
		}
		if err := p.eat('('); err != nil {
			return nil, err
		}
		ps := strings.Split(p.until(")"), ",")
		if err := p.eat(')'); err != nil {
			return nil, err
		}
		var err error
		if d.Precision, err = strconv.Atoi(strings.TrimSpace(ps[0])); err != nil {
			return nil, err
		}
		if len(ps) > 1 {
			if d.Scale, err = strconv.Atoi(strings.TrimSpace(ps[1])); err != nil {
				return nil, err
			}
		}
		return d, nil
	case "array":
		if err := p.eat('<'); err != nil {
			return nil, err
		}
		e, err := p.typ()
		if err != nil {
			return nil, err
		}
		return &deltalog.ArrayType{ElementType: e, ContainsNull: true}, p.eat('>')
	case "map":
		if err := p.eat('<'); err != nil {
			return nil, err
		}
		k, err := p.typ()
		if err != nil {
			return nil, err
		}
		if err := p.eat(','); err != nil {
			return nil, err
		}
		v, err := p.typ()
		if err != nil {
			return nil, err
		}
		return &deltalog.MapType{KeyType: k, ValueType: v, ValueContainsNull: true}, p.eat('>')
	case "struct":
		if err := p.eat('<'); err != nil {
			return nil, err
		}
		st := &deltalog.StructType{}
		for !p.peek('>') {
			name := p.until(":")
			if err := p.eat(':'); err != nil {
				return nil, err
			}
			ft, err := p.typ()
			if err != nil {
				return nil, err
			}
			st.Fields = append(st.Fields, deltalog.StructField{Name: name, Type: ft, Nullable: true})
			if !p.peek('>') {
				if err := p.eat(','); err != nil {
					return nil, err
				}
			}
		}
		return st, p.eat('>')
	}
	return nil, fmt.Errorf("unknown type %q", w)
}
