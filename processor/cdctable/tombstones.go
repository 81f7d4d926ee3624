package cdctable

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/cdc2delta/cdc2delta/codecs"
)

// TombstoneDir holds delete tombstones beside the table; Delta readers and
// VACUUM ignore directories starting with '_' (ADR 0022).
const TombstoneDir = "_cdc2delta/tombstones/"

// Tombstone files are named by what makes them count (ADR 0022):
//
//	<version>.<uuid>.json  a batch's, written before its commit; it counts
//	                       once the commit of version has landed and names
//	                       it in commitInfo (TombstonesField)
//	compacted-<uuid>.json  written from counted entries only
//	floor-<uuid>.json      a truncate's floor from before the table existed
//	<version>-<uuid>.json  a batch's, from before commits named their files
//
// All but the first count as they are.
const (
	TombstoneCompactedPrefix = "compacted-"
	TombstoneFloorPrefix     = "floor-"
)

// TombstonesField is the commitInfo field in which a commit names the
// tombstone file of its batch (a base name in TombstoneDir).
const TombstonesField = "cdc2delta.tombstones"

// BatchTombstoneName is the name (in TombstoneDir) of a new tombstone file
// of the commit of version.
func BatchTombstoneName(version int64) string {
	return fmt.Sprintf("%020d.%s.json", version, uuid.NewString())
}

// TombstoneBatchVersion returns the version whose commit must name the file
// name (a base name); ok is false for files that count as they are.
func TombstoneBatchVersion(name string) (version int64, ok bool) {
	v, rest, found := strings.Cut(name, ".")
	if !found || len(v) != 20 || rest == "json" {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

// TombstoneLine is one line of a tombstone file: a deleted key (its
// AppendKey encoding) at the position of its delete and the time it was
// recorded, or (Floor) the position of a truncate. encoding/json defines
// the format; AppendTombstoneLine and DecodeTombstoneLine are fast paths of it.
type TombstoneLine struct {
	Key   []byte `json:"k,omitempty"`
	Pos   string `json:"p"`
	At    int64  `json:"t"`
	Floor bool   `json:"f,omitempty"`
}

// AppendTombstoneLine appends the line of one entry, or of the floor, with
// its newline. Base64 and hex need no JSON escapes; an empty key is omitted,
// as omitempty omits it.
func AppendTombstoneLine(buf []byte, key string, pos codecs.Position, at int64, floor bool) []byte {
	buf = append(buf, '{')
	if key != "" {
		buf = append(buf, `"k":"`...)
		buf = base64.StdEncoding.AppendEncode(buf, []byte(key))
		buf = append(buf, `",`...)
	}
	buf = append(buf, `"p":"`...)
	var bin [codecs.PositionLen]byte
	buf = hex.AppendEncode(buf, pos.AppendBinary(bin[:0]))
	buf = append(buf, `","t":`...)
	buf = strconv.AppendInt(buf, at, 10)
	if floor {
		buf = append(buf, `,"f":true`...)
	}
	return append(buf, "}\n"...)
}

// DecodeTombstoneLine decodes one line of a tombstone file into l. Lines
// as AppendTombstoneLine writes them are decoded by hand: a table that keeps
// its deletes for a week holds millions, read at every open and by every
// writer that shares the table after each of its lost races, and
// encoding/json spends most of that time on reflection. Any other line
// goes to encoding/json, which defines the format. l.Key may point into
// scratch, which is reused from line to line: the caller copies it.
func DecodeTombstoneLine(line []byte, l *TombstoneLine, scratch *[]byte) error {
	if decodeTombstoneLineFast(line, l, scratch) {
		return nil
	}
	*l = TombstoneLine{}
	return json.Unmarshal(line, l)
}

// decodeTombstoneLineFast decodes {"k":"…","p":"…","t":N} and
// {"p":"…","t":N,"f":true}, the only shapes the encoder writes, and
// reports false for anything else, with l in any state.
func decodeTombstoneLineFast(line []byte, l *TombstoneLine, scratch *[]byte) bool {
	*l = TombstoneLine{}
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
