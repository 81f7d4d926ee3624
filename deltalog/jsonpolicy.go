package deltalog

import (
	"bytes"
	"encoding/json"
	"io"
)

// The log's JSON policy: everything deltalog writes into the log (actions, the
// stats and schemaString strings inside them, commitInfo parameters,
// _last_checkpoint, re-encoded checkpoint stats) is encoded without HTML
// escaping, as Spark (Jackson) and delta-rs (serde_json) write it: a predicate
// "a < 5" or a type "array<string>" is stored as such, not as "a \u003c 5".
// Readers parse both spellings alike; the bytes differ only in <, > and &.

// newLogEncoder is a json.Encoder following the log's policy. Encode ends each
// value with a newline, which is the NDJSON line break of a commit file.
func newLogEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}

// MarshalPlain is json.Marshal under the log's policy: no HTML escaping.
func MarshalPlain(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := newLogEncoder(&b).Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}
