package processor

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/merge"
)

// ErrTableFailed reports a table stopped by an error that retrying cannot
// cure: bad input under PolicyFail, an unsafe schema change, a storage or
// registry refusal, an unreadable table.
var ErrTableFailed = errors.New("processor: table stopped")

// TableError is why a table stopped. Its offsets stay unapplied from Offset
// on (Offset is -1 when the failure is not about one record).
type TableError struct {
	Table string
	cdctable.TopicPartition
	Offset int64
	// Phase is what the table was doing: "opening", "decoding",
	// "dead-lettering", "applying".
	Phase string
	Err   error
	// Hint says what an operator can do about it.
	Hint string
}

// Error names the table, where it stopped, the cause and what to do.
func (e *TableError) Error() string {
	where := ""
	if e.Offset >= 0 {
		where = fmt.Sprintf(" at %s/%d offset %d", e.Topic, e.Partition, e.Offset)
	}
	msg := fmt.Sprintf("table %s stopped while %s%s: %v", e.Table, e.Phase, where, e.Err)
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return msg
}

// Unwrap returns both ErrTableFailed and the cause.
func (e *TableError) Unwrap() []error { return []error{ErrTableFailed, e.Err} }

// hint says what an operator can do about a permanent error, for the log
// line, /readyz and the README's Failures section.
func hint(err error, phase string) string {
	var corrupt *deltalog.CorruptFileError
	var torn *deltalog.TornCommitError
	switch {
	case errors.Is(err, codecs.ErrRegistryRefused):
		return "the schema registry refused the request: check schema_registry.username, password or bearer_token, and the user's permissions; then restart"
	case errors.Is(err, kerr.TopicAuthorizationFailed):
		return "kafka refused access to the topic: grant the user of kafka.sasl READ on it (and WRITE on the dead-letter topic); then restart"
	case errors.Is(err, ErrDeadLetterTopic):
		return "create the dead-letter topic, or set kafka.dlq_create: true; then restart"
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		return "the table's storage refused the write: check that this process may write to the table path (permissions, read-only mount, bucket policy); then restart"
	case errors.Is(err, syscall.ENOSPC):
		return "the disk holding the table is full: free space; then restart"
	case errors.Is(err, deltalog.ErrNotExist) && phase == "opening":
		// Before the corrupt-file case: a data file that cannot be opened
		// because it is gone comes wrapped in a CorruptFileError.
		return "a file the table's log references is missing: restore it from a backup, or `cdc2delta restore` the table to a version that does not reference it; then restart (see README, Failures)"
	case errors.As(err, &torn):
		// Nothing can be read or restored past a torn commit, but no
		// version builds on the latest one.
		return fmt.Sprintf("the table's latest commit %s is torn: move that file out of the table; the table is then whole at version %d, "+
			"whose txn makes run apply the torn commit's records again (a command's commit, such as update or skip, must be run again); "+
			"then restart (see README, Failures)", torn.Err.Path, torn.Version-1)
	case errors.As(err, &corrupt) && strings.HasPrefix(corrupt.Path, "_delta_log/"):
		return "a file of the table's log is unreadable: restore it from a backup (`cdc2delta restore` cannot read the log past it either); then restart (see README, Failures)"
	case errors.As(err, &corrupt):
		return "a file of the table is unreadable: restore it from a backup, or `cdc2delta restore` the table to a version before it; then restart (see README, Failures)"
	case errors.Is(err, merge.ErrNotHistoryTable):
		return "a history table's path holds another table: point history_path at a new location or, with history: only, route the table to a new path (tables.path); then restart"
	case errors.Is(err, cdctable.ErrHistoryTable):
		return "the table's path holds a history table (history: only): keep history: only for the table, or route it to a new path (tables.path); then restart"
	case errors.Is(err, codecs.ErrSchemaChange), errors.Is(err, merge.ErrSchema):
		return "the new source schema cannot be applied to the table safely; see the error for the column, evolve or re-create the table, then restart"
	case errors.Is(err, codecs.ErrUnsupportedSchema):
		return "every record of this schema would fail: fix the connector's schema (a key column must stay in the value), then restart"
	}
	// A cause not named above still gets a hint: every stop must say what
	// to do (a permanent storage error used to stop its table with none).
	switch phase {
	case "decoding":
		return "" // the caller names the record and the bad-input choices
	case "opening":
		return "the table could not be opened: fix the cause in the error (its storage, credentials or files); then restart"
	case "dead-lettering":
		return "the record could not be dead-lettered: fix the cause in the error (the dead-letter topic, Kafka's permissions); then restart"
	}
	return "applying failed with an error that retrying does not cure, most often the table's storage: fix the cause in the error; then restart (nothing past the table's txn was applied)"
}
