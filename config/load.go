package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ErrSyntax matches every problem of reading a file as a Config: bad YAML syntax,
// unknown fields, wrong types, values that cannot be read, bad ${ENV} references.
var ErrSyntax = errors.New("config: cannot parse")

// SyntaxError is one problem of reading the file: Path names the field as written
// ("tables.overrides[0].deletemode"; empty for bad YAML syntax), Line is the line in the
// file (0 when unknown) and Problem says what is wrong and what is accepted.
type SyntaxError struct {
	Path    string
	Line    int
	Problem string
	// Err is the underlying cause, when there is one (an ErrEnv reference problem).
	Err error
}

func (e *SyntaxError) Error() string {
	var b strings.Builder
	if e.Path != "" {
		b.WriteString(e.Path + ": ")
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	b.WriteString(e.Problem)
	return b.String()
}

// Unwrap makes errors.Is(err, ErrSyntax) true, and errors.Is(err, cause) for its cause.
func (e *SyntaxError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrSyntax, e.Err}
	}
	return []error{ErrSyntax}
}

// Load reads the file at path, expanding ${ENV} references from the process
// environment, and validates the result; the error lists every problem (see Check).
func Load(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("reading config: %w", err)
	}
	c, err := Check(data, os.LookupEnv, nil)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Check reads a file as Parse does, applies override (when not nil) to what it read, and
// validates the result, so that one call reports every problem: those of reading the
// file (*SyntaxError, matching ErrSyntax) and those of the values (*FieldError, matching
// ErrInvalid), joined with errors.Join. A field that could not be read keeps its default
// and is not validated again, so no problem is reported twice. Invalid YAML syntax is
// reported alone: nothing after it can be read.
//
// With an error the returned Config is what could be read; it is for further checks of
// the same file only, never to run with.
func Check(data []byte, env func(string) (string, bool), override func(*Config)) (Config, error) {
	c, perr := Parse(data, env)
	var se *SyntaxError
	if errors.As(perr, &se) && se.Path == "" {
		return c, perr // invalid YAML: nothing was read
	}
	if override != nil {
		override(&c)
	}
	bad := syntaxPaths(perr)
	problems := leaves(perr)
	for _, e := range leaves(c.Validate()) {
		if fe, ok := e.(*FieldError); !ok || !related(fe.Path, bad) {
			problems = append(problems, e)
		}
	}
	return c, errors.Join(problems...)
}

// leaves flattens an errors.Join tree.
func leaves(err error) []error {
	if err == nil {
		return nil
	}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	if _, own := err.(*SyntaxError); own {
		return []error{err}
	}
	var out []error
	for _, e := range j.Unwrap() {
		out = append(out, leaves(e)...)
	}
	return out
}

// syntaxPaths are the paths of the fields that could not be read.
func syntaxPaths(err error) []string {
	var out []string
	for _, e := range leaves(err) {
		if se, ok := e.(*SyntaxError); ok && se.Path != "" {
			out = append(out, se.Path)
		}
	}
	return out
}

// related reports whether path is one of paths, or inside or around one of them
// ("kafka" and "kafka.brokers" are related, "kafka.brokers" and "kafka.topics" not).
func related(path string, paths []string) bool {
	within := func(inner, outer string) bool {
		return strings.HasPrefix(inner, outer+".") || strings.HasPrefix(inner, outer+"[")
	}
	for _, p := range paths {
		if path == p || within(path, p) || within(p, path) {
			return true
		}
	}
	return false
}

// Parse decodes YAML onto Default(), expanding ${ENV} references in values with env
// (os.LookupEnv in Load). It does not validate (Check does both). Expansion happens per
// value after parsing, so a secret containing YAML syntax (": ", "#") cannot change the
// document.
//
// Reading goes on past a bad field: the error joins a *SyntaxError for every unknown
// field, wrong type, unreadable value and bad ${ENV} reference, each with its path and
// line, and the Config returned with it holds everything else that was read (a bad field
// keeps its default).
//
// A default paired with a field the file sets follows it (derived.go): batch:
// {max_records: 50} reads as min_records 50, not as the default 100 above it.
func Parse(data []byte, env func(string) (string, bool)) (Config, error) {
	c := Default()
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return c, nil // an empty file is all defaults
		}
		return c, yamlSyntaxError(err, data)
	}
	d := &decoder{env: env, set: map[string]bool{}}
	d.value(&doc, reflectValue(&c), "")
	c.followSetFields(d.set)
	return c, errors.Join(d.problems...)
}
