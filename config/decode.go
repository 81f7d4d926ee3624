package config

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// decoder reads a YAML node tree onto a Config field by field, so that one bad field
// does not hide the others, and every problem names its path and line. yaml.v3's own
// decoding stops at syntax it cannot map, names no paths, and offers KnownFields only on
// a Decoder.
type decoder struct {
	env      func(string) (string, bool)
	problems []error
	// set holds the paths of the fields the file gives a value, for the
	// defaults that follow them (derived.go).
	set map[string]bool
}

func (d *decoder) fail(path string, line int, format string, args ...any) {
	d.problems = append(d.problems, &SyntaxError{Path: path, Line: line, Problem: fmt.Sprintf(format, args...)})
}

func reflectValue(c *Config) reflect.Value { return reflect.ValueOf(c).Elem() }

// value decodes n onto v, the field at path.
func (d *decoder) value(n *yaml.Node, v reflect.Value, path string) {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) > 0 {
			d.value(n.Content[0], v, path)
		}
		return
	case yaml.AliasNode:
		d.value(n.Alias, v, path)
		return
	}
	switch t := v.Type(); {
	case t.Kind() == reflect.Struct:
		d.mapping(n, v, path)
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
		d.structList(n, v, path)
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.Struct:
		d.structMap(n, v, path)
	case t.Kind() == reflect.Slice:
		d.list(n, v, path)
	default:
		d.scalar(n, v, path)
	}
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

// mapping decodes a mapping onto the struct v; an empty value ("kafka:") keeps the
// defaults.
func (d *decoder) mapping(n *yaml.Node, v reflect.Value, path string) {
	if isNull(n) {
		return
	}
	fields := yamlFields(v.Type())
	if n.Kind != yaml.MappingNode {
		d.fail(path, n.Line, "must be a mapping of fields (%s), got %s", strings.Join(sortedKeys(fields), ", "), describe(n))
		return
	}
	// Merge keys first, so the mapping's own keys override what they bring. Of several
	// merged mappings the first wins, as YAML says.
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			src := resolve(n.Content[i+1])
			if src.Kind == yaml.SequenceNode {
				for _, m := range slices.Backward(src.Content) {
					d.mapping(resolve(m), v, path)
				}
			} else {
				d.mapping(src, v, path)
			}
		}
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			continue
		}
		if k.Kind != yaml.ScalarNode {
			d.fail(path, k.Line, "a field name must be a plain name, got %s", describe(k))
			continue
		}
		p := joinPath(path, k.Value)
		if first, dup := seen[k.Value]; dup {
			d.fail(p, k.Line, "set twice (first on line %d)", first)
			continue
		}
		seen[k.Value] = k.Line
		f, ok := fields[k.Value]
		if !ok {
			d.fail(p, k.Line, "unknown field; accepted: %s", strings.Join(sortedKeys(fields), ", "))
			continue
		}
		if !isNull(resolve(val)) {
			d.set[p] = true
		}
		d.value(val, v.FieldByIndex(f.Index), p)
	}
}

func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// structList decodes a list of mappings (tables.overrides).
func (d *decoder) structList(n *yaml.Node, v reflect.Value, path string) {
	if isNull(n) {
		v.SetZero()
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.fail(path, n.Line, "must be a list of mappings (- {...}), got %s", describe(n))
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, c := range n.Content {
		d.value(c, s.Index(i), fmt.Sprintf("%s[%d]", path, i))
	}
	v.Set(s)
}

// structMap decodes a mapping of names to mappings (catalogs), each at
// path.NAME.
func (d *decoder) structMap(n *yaml.Node, v reflect.Value, path string) {
	if isNull(n) {
		v.SetZero()
		return
	}
	if n.Kind != yaml.MappingNode {
		d.fail(path, n.Line, "must be a mapping of names to mappings (NAME: {...}), got %s", describe(n))
		return
	}
	m := reflect.MakeMap(v.Type())
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.ShortTag() == "!!merge" {
			d.fail(path, k.Line, "a name must be a plain name, got %s", describe(k))
			continue
		}
		p := joinPath(path, k.Value)
		if m.MapIndex(reflect.ValueOf(k.Value)).IsValid() {
			d.fail(p, k.Line, "set twice")
			continue
		}
		e := reflect.New(v.Type().Elem()).Elem()
		d.value(val, e, p)
		m.SetMapIndex(reflect.ValueOf(k.Value).Convert(v.Type().Key()), e)
	}
	v.Set(m)
}

// list decodes a list of scalars, element by element.
func (d *decoder) list(n *yaml.Node, v reflect.Value, path string) {
	if isNull(n) {
		v.SetZero()
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.fail(path, n.Line, "must be a list such as [a, b], got %s", describe(n))
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	ok := true
	for i, c := range n.Content {
		before := len(d.problems)
		d.scalar(resolve(c), s.Index(i), fmt.Sprintf("%s[%d]", path, i))
		ok = ok && len(d.problems) == before
	}
	if ok {
		v.Set(s)
	}
}

// scalar decodes one value; on a problem v keeps its default.
func (d *decoder) scalar(n *yaml.Node, v reflect.Value, path string) {
	n = resolve(n)
	t := v.Type()
	if isNull(n) {
		// As yaml.v3 does: an empty value clears pointers, keeps other defaults.
		if t.Kind() == reflect.Pointer {
			v.SetZero()
		}
		return
	}
	if n.Kind != yaml.ScalarNode {
		d.fail(path, n.Line, "must be %s, got %s", kindName(t), describe(n))
		return
	}
	s := *n
	expanded, err := Expand(n.Value, d.env)
	if err != nil {
		d.problems = append(d.problems, &SyntaxError{Path: path, Line: n.Line,
			Problem: strings.TrimPrefix(err.Error(), ErrEnv.Error()+": "), Err: ErrEnv})
		return
	}
	if expanded != n.Value {
		s.Value = expanded
		if derefKind(t) != reflect.String {
			// "${VAR}" is a string before expansion; what it expands to is typed like a
			// plain value, quoted or not: max_records: "${MAX:-1000}" is an integer.
			s.Tag, s.Style = "", 0
		}
	}
	target := reflect.New(t)
	if base := derefKind(t); base == reflect.Int || base == reflect.Int64 {
		if msg := wholeNumber(&s, t); msg != "" {
			d.fail(path, n.Line, "%s", msg)
			return
		}
	}
	if err := s.Decode(target.Interface()); err != nil {
		d.fail(path, n.Line, "%s", valueProblem(&s, t, err))
		return
	}
	v.Set(target.Elem())
}

func derefKind(t reflect.Type) reflect.Kind {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind()
}

// wholeNumber refuses what yaml.v3 would truncate silently: it sets an int from 1.5 as 1.
// Types with their own UnmarshalYAML (Duration, ByteSize) parse for themselves.
func wholeNumber(n *yaml.Node, t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return ""
	}
	switch n.ShortTag() {
	case "!!int":
		var i int64
		if n.Decode(&i) != nil {
			return fmt.Sprintf("%s is out of range for a whole number", n.Value)
		}
		return ""
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil || f != math.Trunc(f) || math.IsInf(f, 0) {
			return fmt.Sprintf("%s is not a whole number", n.Value)
		}
		if math.Abs(f) >= math.MaxInt64 {
			return fmt.Sprintf("%s is out of range for a whole number", n.Value)
		}
		return ""
	}
	return fmt.Sprintf("%q is not a whole number", n.Value)
}

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

var yamlLineRE = regexp.MustCompile(`^line \d+: `)

// valueProblem says why a scalar did not decode into t.
func valueProblem(n *yaml.Node, t reflect.Type, err error) string {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg := strings.TrimPrefix(te.Errors[0], "yaml: ")
		msg = yamlLineRE.ReplaceAllString(msg, "")
		if !strings.HasPrefix(msg, "cannot unmarshal") {
			return msg // from an UnmarshalYAML of ours
		}
	}
	switch derefKind(t) {
	case reflect.Bool:
		return fmt.Sprintf("%q is not true or false", n.Value)
	case reflect.Int, reflect.Int64:
		return fmt.Sprintf("%q is not a whole number", n.Value)
	}
	return fmt.Sprintf("%q is not %s: %v", n.Value, kindName(t), err)
}

// kindName names what a field of type t takes.
func kindName(t reflect.Type) string {
	switch derefKind(t) {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64:
		switch {
		case t == reflect.TypeFor[Duration]() || t == reflect.TypeFor[*Duration]():
			return "a duration such as 1s"
		case t == reflect.TypeFor[ByteSize]():
			return "a byte size such as 16MiB"
		}
		return "a whole number"
	case reflect.Slice:
		return "a list"
	case reflect.String:
		return "a string"
	}
	return "a single value"
}

// describe names a node's kind and start for messages.
func describe(n *yaml.Node) string {
	n = resolve(n)
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return strconv.Quote(n.Value)
}

// yamlSyntaxError turns yaml.v3's error for a document it cannot parse into a
// *SyntaxError with the right line. For parser errors (as opposed to scanner errors)
// yaml.v3 prints the 0-based line of the construct it was parsing ("line 1" for an
// unclosed [ on line 2), or no line at all when that is the first line.
func yamlSyntaxError(err error, data []byte) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if m := yamlLineRE.FindString(msg); m != "" {
		line, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(m, "line "), ": "))
		msg = msg[len(m):]
	}
	if parserProblem(msg) {
		line++ // 0-based, and absent when 0
		if closing, ok := strings.CutPrefix(msg, "did not find expected ',' or "); ok {
			line, msg = unclosedFlow(msg, closing, line, data)
		}
	}
	return &SyntaxError{Line: line, Problem: msg + "; this is invalid YAML, so nothing else can be checked until it is fixed", Err: err}
}

// parserProblem reports whether msg is one of yaml.v3's parser problems (parserc.go),
// whose line it prints 0-based; its scanner problems print the line 1-based.
func parserProblem(msg string) bool {
	for _, p := range []string{
		"did not find expected <stream-start>", "did not find expected <document start>",
		"found undefined tag handle", "did not find expected node content",
		"did not find expected '-' indicator", "did not find expected key",
		"did not find expected ',' or ']'", "did not find expected ',' or '}'",
		"found duplicate %YAML directive", "found incompatible YAML document", "found duplicate %TAG directive",
	} {
		if msg == p {
			return true
		}
	}
	return false
}

// unclosedFlow words an unclosed [ or {: yaml.v3 reports the line it opened on or, when
// that is the first line, the line where it gave up.
func unclosedFlow(msg, closing string, line int, data []byte) (int, string) {
	opening := "["
	if closing == "'}'" {
		opening = "{"
	}
	lines := strings.Split(string(data), "\n")
	at := func(l int) bool { return l >= 1 && l <= len(lines) && strings.Contains(lines[l-1], opening) }
	switch {
	case at(line):
	case at(1):
		line = 1
	default:
		return line, msg
	}
	return line, fmt.Sprintf("the %s opened on this line is never closed (%s)", opening, msg)
}

// yamlFields maps the yaml names of t's fields to the fields.
func yamlFields(t reflect.Type) map[string]reflect.StructField {
	m := make(map[string]reflect.StructField, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if f.IsExported() && name != "" && name != "-" {
			m[name] = f
		}
	}
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

func joinPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}
