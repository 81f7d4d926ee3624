package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ErrSyntax reports a file that is not valid YAML for Config: bad syntax, unknown
// fields, wrong types or bad ${ENV} references. The error lists every such problem.
var ErrSyntax = errors.New("config: cannot parse")

// Load reads the file at path, expanding ${ENV} references from the process
// environment, and validates the result.
func Load(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("reading config: %w", err)
	}
	c, err := Parse(data, os.LookupEnv)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	if err := c.Validate(); err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Parse decodes YAML onto Default(), expanding ${ENV} references in scalar values with
// env (os.LookupEnv in Load). It does not validate. Expansion happens per value after
// parsing, so a secret containing YAML syntax (": ", "#") cannot change the document.
func Parse(data []byte, env func(string) (string, bool)) (Config, error) {
	c := Default()
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return c, nil // an empty file is all defaults
		}
		return Config{}, fmt.Errorf("%w: %w", ErrSyntax, err)
	}
	var problems []error
	expandNode(&doc, env, &problems)
	checkFields(&doc, reflect.TypeOf(c), "", &problems)
	if err := doc.Decode(&c); err != nil {
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			return Config{}, fmt.Errorf("%w: %w", ErrSyntax, err)
		}
		for _, m := range te.Errors {
			problems = append(problems, errors.New(strings.TrimPrefix(m, "yaml: ")))
		}
	}
	if len(problems) > 0 {
		return Config{}, fmt.Errorf("%w: %w", ErrSyntax, errors.Join(problems...))
	}
	return c, nil
}

func expandNode(n *yaml.Node, env func(string) (string, bool), problems *[]error) {
	if n.Kind == yaml.ScalarNode {
		v, err := Expand(n.Value, env)
		if err != nil {
			*problems = append(*problems, fmt.Errorf("line %d: %w", n.Line, err))
			return
		}
		n.Value = v
		return
	}
	for _, c := range n.Content {
		expandNode(c, env, problems)
	}
}

// checkFields reports mapping keys that match no field of t, with the path and the
// accepted names. yaml.v3 offers KnownFields only on a Decoder, not on Node.Decode, and
// its message names neither the path nor the alternatives.
func checkFields(n *yaml.Node, t reflect.Type, path string, problems *[]error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch n.Kind {
	case yaml.DocumentNode, yaml.AliasNode:
		for _, c := range n.Content {
			checkFields(c, t, path, problems)
		}
		if n.Alias != nil {
			checkFields(n.Alias, t, path, problems)
		}
	case yaml.SequenceNode:
		if t.Kind() != reflect.Slice {
			return // the decoder reports the type error
		}
		for i, c := range n.Content {
			checkFields(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i), problems)
		}
	case yaml.MappingNode:
		if t.Kind() != reflect.Struct {
			return
		}
		fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "<<" {
				checkFields(v, t, path, problems)
				continue
			}
			p := joinPath(path, k.Value)
			f, ok := fields[k.Value]
			if !ok {
				*problems = append(*problems, fmt.Errorf("%s: unknown field (line %d); accepted: %s",
					p, k.Line, strings.Join(sortedKeys(fields), ", ")))
				continue
			}
			checkFields(v, f, p, problems)
		}
	}
}

func yamlFields(t reflect.Type) map[string]reflect.Type {
	m := make(map[string]reflect.Type, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if f.IsExported() && name != "" && name != "-" {
			m[name] = f.Type
		}
	}
	return m
}

func sortedKeys(m map[string]reflect.Type) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func joinPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}
