package deltalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// commitInfoFields mirrors CommitInfo without its methods, to reuse the struct tags.
type commitInfoFields CommitInfo

// MarshalJSON writes the modelled fields and then Extra, which never overrides them.
func (ci CommitInfo) MarshalJSON() ([]byte, error) {
	known, err := MarshalPlain(commitInfoFields(ci))
	if err != nil {
		return nil, err
	}
	if len(ci.Extra) == 0 {
		return known, nil
	}
	m := make(map[string]json.RawMessage, len(ci.Extra)+10)
	for k, v := range ci.Extra {
		m[k] = v
	}
	var km map[string]json.RawMessage
	if err := json.Unmarshal(known, &km); err != nil {
		return nil, err
	}
	for k, v := range km {
		m[k] = v
	}
	return MarshalPlain(m)
}

// UnmarshalJSON reads the modelled fields leniently: a writer that puts another JSON type
// where Spark puts a string must not make the log unreadable, so such values are kept in
// Extra verbatim instead. operationParameters and operationMetrics take values of any
// JSON type (see OperationValues).
func (ci *CommitInfo) UnmarshalJSON(b []byte) error {
	// Fast path for the common case (plain Spark commits, and ours but for a writer's own
	// fields): only modelled keys, all of the expected types. One typed pass is several times cheaper than the
	// key-by-key path below, and commitInfo parsing dominates log replay.
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var fast commitInfoFields
	if dec.Decode(&fast) == nil && !dec.More() {
		*ci = CommitInfo(fast)
		return nil
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	if ci.unmarshalTyped(b, all) {
		return nil
	}
	*ci = CommitInfo{}
	for k, v := range all {
		if !isKnownCommitInfoKey(k) || !decodeCommitInfoField(ci, k, v) {
			if ci.Extra == nil {
				ci.Extra = make(map[string]json.RawMessage)
			}
			ci.Extra[k] = v
		}
	}
	return nil
}

// unmarshalTyped is the middle path, for modelled keys of the expected types beside keys
// CommitInfo does not model (a writer's own fields, clientVersion, tags): a lenient typed
// pass sets the fields and the unknown keys of all go to Extra, about twice as fast as
// going key by key. It reports false, leaving ci alone, when a modelled value has another
// type, or a key only case-folds to a modelled one (encoding/json would decode it into the
// field, and Extra would keep it too).
func (ci *CommitInfo) unmarshalTyped(b []byte, all map[string]json.RawMessage) bool {
	var typed commitInfoFields
	if json.Unmarshal(b, &typed) != nil {
		return false
	}
	var extra map[string]json.RawMessage
	for k, v := range all {
		if isKnownCommitInfoKey(k) {
			continue
		}
		if foldsToCommitInfoKey(k) {
			return false
		}
		if extra == nil {
			extra = make(map[string]json.RawMessage)
		}
		extra[k] = v
	}
	*ci = CommitInfo(typed)
	ci.Extra = extra
	return true
}

// commitInfoKeys are the JSON keys CommitInfo models.
var commitInfoKeys = []string{"timestamp", "inCommitTimestamp", "userId", "userName", "operation",
	"operationParameters", "operationMetrics", "job", "notebook", "clusterId", "readVersion",
	"isolationLevel", "isBlindAppend", "userMetadata", "engineInfo", "txnId"}

// isKnownCommitInfoKey reports whether CommitInfo models the JSON key; the rest go to Extra.
func isKnownCommitInfoKey(k string) bool { return slices.Contains(commitInfoKeys, k) }

// foldsToCommitInfoKey reports whether k equals a modelled key but for case, which
// encoding/json would decode into the field.
func foldsToCommitInfoKey(k string) bool {
	return slices.ContainsFunc(commitInfoKeys, func(m string) bool { return strings.EqualFold(k, m) })
}

// decodeCommitInfoField decodes one modelled key; false means its JSON type did not fit,
// in which case the field is left unset.
func decodeCommitInfoField(ci *CommitInfo, k string, v json.RawMessage) bool {
	switch k {
	case "timestamp":
		return decodeInto(v, &ci.Timestamp)
	case "inCommitTimestamp":
		return decodeInto(v, &ci.InCommitTimestamp)
	case "userId":
		return decodeInto(v, &ci.UserID)
	case "userName":
		return decodeInto(v, &ci.UserName)
	case "operation":
		return decodeInto(v, &ci.Operation)
	case "operationParameters":
		return decodeInto(v, &ci.OperationParameters)
	case "operationMetrics":
		return decodeInto(v, &ci.OperationMetrics)
	case "job":
		return decodeInto(v, &ci.Job)
	case "notebook":
		return decodeInto(v, &ci.Notebook)
	case "clusterId":
		return decodeInto(v, &ci.ClusterID)
	case "readVersion":
		return decodeInto(v, &ci.ReadVersion)
	case "isolationLevel":
		return decodeInto(v, &ci.IsolationLevel)
	case "isBlindAppend":
		return decodeInto(v, &ci.IsBlindAppend)
	case "userMetadata":
		return decodeInto(v, &ci.UserMetadata)
	case "engineInfo":
		return decodeInto(v, &ci.EngineInfo)
	case "txnId":
		return decodeInto(v, &ci.TxnID)
	}
	return false
}

// decodeInto sets *dst only if v decodes completely: json.Unmarshal may fill a map
// partially before failing.
func decodeInto[T any](v json.RawMessage, dst *T) bool {
	var x T
	if json.Unmarshal(v, &x) != nil {
		return false
	}
	*dst = x
	return true
}

// errEmptyCommit marks a commit file with no actions at all; it cannot be a finished commit.
var errEmptyCommit = errors.New("deltalog: commit file is empty")

// maxLogLine bounds one JSON line; larger lines are treated as corrupt rather than
// buffered without limit.
const maxLogLine = 256 << 20

// ParseLogLine decodes one line of a commit file. Unknown action kinds give an Action with
// no field set (ok=false), which callers skip as the protocol requires.
func ParseLogLine(line []byte) (a Action, ok bool, err error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return Action{}, false, nil
	}
	if len(line) > maxLogLine {
		return Action{}, false, fmt.Errorf("deltalog: log line of %d bytes exceeds limit", len(line))
	}
	if line[0] != '{' {
		return Action{}, false, fmt.Errorf("deltalog: log line is not a JSON object")
	}
	if err := json.Unmarshal(line, &a); err != nil {
		return Action{}, false, err
	}
	return a, a.kind() != "", nil
}

// parseCommit decodes a whole commit file. Any undecodable line, or a file whose last line
// is cut short, is reported as *CorruptFileError naming path.
func parseCommit(path string, data []byte) ([]Action, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &CorruptFileError{Path: path, Err: errEmptyCommit}
	}
	actions := make([]Action, 0, bytes.Count(data, []byte{'\n'})+1)
	lineNo := 0
	for len(data) > 0 {
		lineNo++
		line, rest, _ := bytes.Cut(data, []byte{'\n'})
		data = rest
		a, ok, err := ParseLogLine(line)
		if err != nil {
			return nil, &CorruptFileError{Path: path, Err: fmt.Errorf("line %d: %w", lineNo, err)}
		}
		if ok {
			actions = append(actions, a)
		}
	}
	return actions, nil
}

// encodeCommit writes actions as newline-delimited JSON, one action per line.
func encodeCommit(actions []Action) ([]byte, error) {
	var buf bytes.Buffer
	enc := newLogEncoder(&buf)
	for i, a := range actions {
		if a.kind() == "" {
			return nil, fmt.Errorf("deltalog: action %d has no field set", i)
		}
		if err := enc.Encode(a); err != nil {
			return nil, fmt.Errorf("encoding action %d (%s): %w", i, a.kind(), err)
		}
	}
	return buf.Bytes(), nil
}

// kind names the set field of an Action, or "" when none is (an unknown action).
func (a *Action) kind() string {
	switch {
	case a.CommitInfo != nil:
		return "commitInfo"
	case a.Protocol != nil:
		return "protocol"
	case a.Metadata != nil:
		return "metaData"
	case a.Add != nil:
		return "add"
	case a.Remove != nil:
		return "remove"
	case a.Txn != nil:
		return "txn"
	case a.CDC != nil:
		return "cdc"
	case a.DomainMetadata != nil:
		return "domainMetadata"
	case a.CheckpointMetadata != nil:
		return "checkpointMetadata"
	case a.Sidecar != nil:
		return "sidecar"
	}
	return ""
}
