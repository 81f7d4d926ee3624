package config

import (
	"errors"
	"fmt"
	"strings"
)

// ErrEnv reports a ${VAR} reference that cannot be expanded.
var ErrEnv = errors.New("config: bad environment reference")

// Expand replaces ${NAME} and ${NAME:-default} in s with values from env. As in the
// shell, the default applies when NAME is unset or empty. "$$" is a literal "$"; any
// other "$" is kept as is, so passwords containing "$" need no escaping unless followed
// by "{". An unset NAME without a default is an error: a silently empty password or
// broker list would fail later and far less clearly.
func Expand(s string, env func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
			continue
		case '{':
		default:
			b.WriteByte(c)
			continue
		}
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			return "", fmt.Errorf("%w: unterminated ${ in %q", ErrEnv, s)
		}
		ref := s[i+2 : i+2+end]
		name, def, hasDef := strings.Cut(ref, ":-")
		if !validEnvName(name) {
			return "", fmt.Errorf("%w: ${%s}: %q is not a variable name", ErrEnv, ref, name)
		}
		v, ok := env(name)
		switch {
		case ok && v != "":
		case hasDef:
			v = def
		case !ok:
			return "", fmt.Errorf("%w: ${%s} is not set (give a default with ${%s:-value})", ErrEnv, name, name)
		}
		b.WriteString(v)
		i += 2 + end
	}
	return b.String(), nil
}

func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		letter := c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}
