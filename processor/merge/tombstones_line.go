package merge

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strconv"
)

// decodeTombstoneLine decodes one line of a tombstone file into l. Lines
// as encodeTombstones writes them are decoded by hand: a table that keeps
// its deletes for a week holds millions, read at every open and by every
// writer that shares the table after each of its lost races, and
// encoding/json spends most of that time on reflection. Any other line
// goes to encoding/json, which defines the format. l.Key may point into
// scratch, which is reused from line to line: the caller copies it.
func decodeTombstoneLine(line []byte, l *tombstoneLine, scratch *[]byte) error {
	if decodeTombstoneLineFast(line, l, scratch) {
		return nil
	}
	*l = tombstoneLine{}
	return json.Unmarshal(line, l)
}

// decodeTombstoneLineFast decodes {"k":"…","p":"…","t":N} and
// {"p":"…","t":N,"f":true}, the only shapes the encoder writes, and
// reports false for anything else, with l in any state.
func decodeTombstoneLineFast(line []byte, l *tombstoneLine, scratch *[]byte) bool {
	*l = tombstoneLine{}
	rest, ok := bytes.CutPrefix(line, []byte(`{"k":"`))
	if ok {
		var b64 []byte
		if b64, rest, ok = cutString(rest); !ok {
			return false
		}
		n := base64.StdEncoding.DecodedLen(len(b64))
		if cap(*scratch) < n {
			*scratch = make([]byte, n)
		}
		key := (*scratch)[:n]
		// Only canonical padded base64 without line breaks: Decode also
		// skips '\r' and '\n', which JSON cannot hold unescaped anyway.
		n, err := base64.StdEncoding.Strict().Decode(key, b64)
		if err != nil || n == 0 {
			return false // an empty key is omitted by the encoder
		}
		l.Key = key[:n]
		if rest, ok = bytes.CutPrefix(rest, []byte(`,"p":"`)); !ok {
			return false
		}
	} else if rest, ok = bytes.CutPrefix(line, []byte(`{"p":"`)); !ok {
		return false
	}
	var p []byte
	if p, rest, ok = cutString(rest); !ok {
		return false
	}
	l.Pos = string(p)
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"t":`)); !ok {
		return false
	}
	i := 0
	for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9' || i == 0 && rest[i] == '-') {
		i++
	}
	// Leading zeros are not JSON; strconv would take them.
	if i == 0 || rest[0] == '0' && i > 1 || rest[0] == '-' && (i == 1 || rest[1] == '0') {
		return false
	}
	at, err := strconv.ParseInt(string(rest[:i]), 10, 64)
	if err != nil {
		return false
	}
	l.At = at
	switch rest = rest[i:]; {
	case string(rest) == `}`:
	case l.Key == nil && string(rest) == `,"f":true}`:
		l.Floor = true
	default:
		return false
	}
	return true
}

// cutString returns the bytes before the next '"' and what follows it. It
// reports false at an escape or a control byte, which only encoding/json
// decodes correctly.
func cutString(b []byte) (s, rest []byte, ok bool) {
	for i, c := range b {
		switch {
		case c == '"':
			return b[:i], b[i+1:], true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return nil, nil, false
		}
	}
	return nil, nil, false
}
