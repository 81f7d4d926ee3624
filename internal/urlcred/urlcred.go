package urlcred

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Mask replaces a password in Redact's output.
const Mask = "***"

// ErrUnparsable reports a URL that does not parse. Its message never
// repeats the URL, which may carry a password.
var ErrUnparsable = errors.New("urlcred: not a URL")

// Redact returns s with the password of its userinfo replaced by Mask
// ("http://user:***@host:8081/path"); anything else, the user name
// included, is kept, as [url.URL.Redacted] does. It works on strings that
// do not parse as URLs too, so an invalid URL can be quoted in an error:
// the userinfo is whatever precedes the last "@" of the authority (after
// "scheme://", up to the first "/", "?" or "#").
func Redact(s string) string {
	start, auth := authority(s)
	at := strings.LastIndex(auth, "@")
	if at < 0 {
		return s
	}
	user, _, hasPassword := strings.Cut(auth[:at], ":")
	if !hasPassword {
		return s
	}
	return s[:start] + user + ":" + Mask + s[start+at:]
}

// HasUserinfo reports whether s carries a user (and maybe a password)
// before its host.
func HasUserinfo(s string) bool {
	_, auth := authority(s)
	return strings.Contains(auth, "@")
}

// authority returns where the authority of s starts (after "scheme://", or
// at 0) and the authority itself, up to the first "/", "?" or "#".
func authority(s string) (int, string) {
	start := 0
	if i := strings.Index(s, "://"); i >= 0 {
		start = i + len("://")
	}
	auth := s[start:]
	if end := strings.IndexAny(auth, "/?#"); end >= 0 {
		auth = auth[:end]
	}
	return start, auth
}

// Split parses raw and returns it without its userinfo, and the user and
// password the userinfo held (both empty: none; percent-escapes decoded).
// A URL that does not parse is an error wrapping ErrUnparsable that names
// it redacted.
func Split(raw string) (clean, user, password string, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error repeats the URL; only its cause is kept.
		return "", "", "", fmt.Errorf("%w: %q: %v", ErrUnparsable, Redact(raw), errors.Unwrap(err))
	}
	if u.User == nil {
		return raw, "", "", nil
	}
	user = u.User.Username()
	password, _ = u.User.Password()
	u.User = nil
	return u.String(), user, password, nil
}
