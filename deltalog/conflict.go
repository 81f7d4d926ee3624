package deltalog

import (
	"errors"
	"fmt"
	"log/slog"
)

// Sentinels for each kind of commit conflict; *ConflictError unwraps to one of them.
var (
	// ErrConcurrentAppend: a concurrent commit added files our transaction should have read.
	ErrConcurrentAppend = errors.New("deltalog: concurrent append")
	// ErrConcurrentDeleteRead: a concurrent commit removed a file our transaction read.
	ErrConcurrentDeleteRead = errors.New("deltalog: concurrent delete of a file read")
	// ErrConcurrentDeleteDelete: a concurrent commit removed a file our transaction removes.
	ErrConcurrentDeleteDelete = errors.New("deltalog: concurrent delete of a file deleted")
	// ErrMetadataChanged: a concurrent commit changed the table metadata.
	ErrMetadataChanged = errors.New("deltalog: concurrent metadata change")
	// ErrProtocolChanged: a concurrent commit changed the protocol.
	ErrProtocolChanged = errors.New("deltalog: concurrent protocol change")
	// ErrConcurrentTransaction: a concurrent commit wrote a txn appId or metadata domain
	// that our transaction reads or writes.
	ErrConcurrentTransaction = errors.New("deltalog: concurrent transaction")
	// ErrRetriesExhausted: every retry lost the race to another writer.
	ErrRetriesExhausted = errors.New("deltalog: commit retries exhausted")
)

// ConflictError reports a commit that cannot be retried because a concurrent commit at
// Version conflicts with it. Kind is one of the sentinels above.
type ConflictError struct {
	// Version is the winning commit that conflicts (for ErrRetriesExhausted: the last
	// version tried).
	Version int64
	Kind    error
	// Detail names what collided: a path, an appId or a domain.
	Detail string
}

// Error implements error.
func (e *ConflictError) Error() string {
	msg := fmt.Sprintf("%v with version %d", e.Kind, e.Version)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// Unwrap returns the sentinel of the conflict kind.
func (e *ConflictError) Unwrap() error { return e.Kind }

// readSet is what a transaction read, for conflict detection.
type readSet struct {
	wholeTable bool
	files      map[string]bool // decoded paths
	predicate  func(*Add) bool // partition-level predicate over new adds; nil: none
	appIDs     map[string]bool
}

// txnSummary is what our own transaction writes.
type txnSummary struct {
	hasProtocol  bool
	hasMetadata  bool
	removed      map[string]bool // decoded paths
	appIDs       map[string]bool
	domains      map[string]bool
	blindAppend  bool
	snapshotIsol bool // only dataChange=false file actions: SnapshotIsolation
	isolation    string
	// Effective protocol and metadata after the commit, and file action counts.
	protocol Protocol
	meta     Metadata
	added    int
	removedN int
}

// checkWinner applies the protocol's conflict rules (brief §10.2) to one winning commit.
func checkWinner(version int64, winner []Action, ours *txnSummary, read *readSet) error {
	conflict := func(kind error, detail string) error {
		return &ConflictError{Version: version, Kind: kind, Detail: detail}
	}
	winnerBlind := false
	for _, a := range winner {
		if a.CommitInfo != nil && a.CommitInfo.IsBlindAppend != nil {
			winnerBlind = *a.CommitInfo.IsBlindAppend
		}
	}
	for _, a := range winner {
		switch {
		case a.Protocol != nil:
			return conflict(ErrProtocolChanged, "")
		case a.Metadata != nil:
			return conflict(ErrMetadataChanged, "")
		}
	}
	for _, a := range winner {
		switch {
		case a.DomainMetadata != nil:
			if ours.domains[a.DomainMetadata.Domain] {
				return conflict(ErrConcurrentTransaction, "domain "+a.DomainMetadata.Domain)
			}
		case a.Txn != nil:
			if ours.appIDs[a.Txn.AppID] || read.appIDs[a.Txn.AppID] {
				return conflict(ErrConcurrentTransaction, "appId "+a.Txn.AppID)
			}
		}
	}
	// Concurrent appends: adds that change data and fall in what we read. Under
	// WriteSerializable, blind appends of others are allowed; under SnapshotIsolation
	// (our commit only rearranges files) no append conflicts.
	// A metadata change must see every concurrent append (its schema may not fit them).
	if !ours.snapshotIsol && !(ours.isolation == IsolationWriteSerializable && winnerBlind && !ours.hasMetadata) {
		for _, a := range winner {
			if a.Add == nil || !a.Add.DataChange {
				continue
			}
			if read.wholeTable || (read.predicate != nil && read.predicate(a.Add)) {
				return conflict(ErrConcurrentAppend, a.Add.Path)
			}
		}
	}
	for _, a := range winner {
		if a.Remove == nil {
			continue
		}
		k := keyOf(a.Remove.Path, nil).path
		if read.files[k] || (read.wholeTable && !ours.blindAppend) {
			return conflict(ErrConcurrentDeleteRead, a.Remove.Path)
		}
		if ours.removed[k] {
			return conflict(ErrConcurrentDeleteDelete, a.Remove.Path)
		}
	}
	return nil
}

// Isolation levels recorded in commitInfo.isolationLevel.
const (
	IsolationSerializable      = "Serializable"
	IsolationWriteSerializable = "WriteSerializable"
	IsolationSnapshot          = "SnapshotIsolation"
)

// LogValue renders the conflict as structured log attributes.
func (e *ConflictError) LogValue() slog.Value {
	kind := ""
	if e.Kind != nil {
		kind = e.Kind.Error()
	}
	return slog.GroupValue(slog.Int64("version", e.Version), slog.String("kind", kind), slog.String("detail", e.Detail))
}
