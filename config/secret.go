package config

import (
	"fmt"
	"log/slog"
)

// redacted is what every rendering of a Secret prints.
const redacted = "***"

// Secret is a password or token. It prints as *** in every format, JSON, YAML and slog
// so a secret never reaches logs, errors or metrics; Reveal returns the value for the
// one place that needs it (the client it authenticates).
type Secret string

// Reveal returns the secret in clear text.
func (s Secret) Reveal() string { return string(s) }

// String returns *** (or "" for an unset secret, so "is it set" stays visible).
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// Format prints String for every verb, %#v and %q included.
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'q' {
		fmt.Fprintf(f, "%q", s.String())
		return
	}
	fmt.Fprint(f, s.String())
}

// GoString returns the redacted form for %#v.
func (s Secret) GoString() string { return s.String() }

// LogValue redacts the secret in slog output.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalJSON redacts the secret in JSON.
func (s Secret) MarshalJSON() ([]byte, error) { return fmt.Appendf(nil, "%q", s.String()), nil }

// MarshalText redacts the secret in text encodings.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// MarshalYAML redacts the secret in YAML.
func (s Secret) MarshalYAML() (any, error) { return s.String(), nil }
