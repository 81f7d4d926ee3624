package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Duration is a time.Duration written as Go durations ("1s", "168h").
type Duration time.Duration

// UnmarshalYAML parses a Go duration string. A bad value is a type error whose message
// the config decoder reports with the field's path and line.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf(
			"%q is not a duration (use Go syntax such as 500ms, 1s, 168h)", n.Value)}}
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the duration in Go syntax.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// String returns the duration in Go syntax.
func (d Duration) String() string { return time.Duration(d).String() }

// ByteSize is a number of bytes, written as a plain integer or with a unit
// (KiB, MiB, GiB are powers of 1024; KB, MB, GB of 1000).
type ByteSize int64

var byteUnits = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1},
}

// ParseByteSize parses "16MiB", "1GB", "1024" or "512 KiB".
func ParseByteSize(s string) (ByteSize, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range byteUnits {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || (n > 0 && mult > (1<<62)/n) {
		return 0, fmt.Errorf("not a byte size")
	}
	return ByteSize(n * mult), nil
}

// UnmarshalYAML parses a byte size; a bad value is a type error (see Duration).
func (b *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseByteSize(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil {
		msg := fmt.Sprintf("%q is not a byte size (use a number of bytes or units KiB, MiB, GiB, KB, MB, GB)", n.Value)
		if strings.HasPrefix(strings.TrimSpace(n.Value), "-") {
			msg = fmt.Sprintf("%q is negative; a byte size is 0 or more, such as 16MiB", n.Value)
		}
		return &yaml.TypeError{Errors: []string{msg}}
	}
	*b = v
	return nil
}

// String returns the size with the largest binary unit that divides it.
func (b ByteSize) String() string {
	for _, u := range []struct {
		s string
		m int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if b != 0 && int64(b)%u.m == 0 {
			return fmt.Sprintf("%d%s", int64(b)/u.m, u.s)
		}
	}
	return strconv.FormatInt(int64(b), 10)
}
