package codecs

import (
	"errors"
	"fmt"
	"log/slog"
)

// Sentinel errors callers branch on. Every error the decoder returns wraps
// exactly one of them (errors.Is), usually through a typed error carrying
// the details.
var (
	// ErrBadHeader means a non-empty key or value lacks the Confluent
	// 5-byte header (magic 0, 4-byte schema id).
	ErrBadHeader = errors.New("codecs: bad confluent wire header")
	// ErrUnknownSchema means the registry does not know the schema id.
	ErrUnknownSchema = errors.New("codecs: unknown schema id")
	// ErrRegistry means the registry could not be reached or answered with
	// an error that retrying did not cure before the context ended.
	ErrRegistry = errors.New("codecs: schema registry unavailable")
	// ErrRegistryRefused means the registry answered, but refused the
	// request: wrong credentials (401), missing permissions (403) or
	// another client error. Retrying cannot help; the configuration must
	// change.
	ErrRegistryRefused = errors.New("codecs: schema registry refused the request")
	// ErrUnsupportedSchema means a schema is valid Avro but not a Debezium
	// envelope, key or column type this package can map.
	ErrUnsupportedSchema = errors.New("codecs: unsupported schema")
	// ErrBadBody means the Avro body does not decode with its writer schema.
	ErrBadBody = errors.New("codecs: undecodable avro body")
	// ErrUnknownOp means the envelope's op is not one of c, u, d, r, t.
	ErrUnknownOp = errors.New("codecs: unknown op")
	// ErrMissingKey means the record has no key and no key columns are
	// configured for its table.
	ErrMissingKey = errors.New("codecs: missing key")
	// ErrBadEnvelope means the envelope decoded but its content is
	// inconsistent (no row image for the op, malformed LSN, ...).
	ErrBadEnvelope = errors.New("codecs: bad envelope")
	// ErrOutOfRange means a value cannot be represented by its Delta type.
	ErrOutOfRange = errors.New("codecs: value out of range")
	// ErrSchemaChange means a new schema cannot be applied to a table
	// without losing or reinterpreting data.
	ErrSchemaChange = errors.New("codecs: unsafe schema change")
)

// DecodeError is the error [Decoder.Decode] returns. The decoder fills
// SchemaID and Err; the caller, which knows where the record came from, fills
// Topic, Partition and Offset (errors.As, then set the fields) before
// logging it or routing the record to a dead-letter queue.
type DecodeError struct {
	Topic     string
	Partition int32
	Offset    int64
	// SchemaID is the id from the failing part's header, or -1 when the
	// header itself was unreadable or the record carries no registry id
	// (the json converter); the message then names no schema.
	SchemaID int
	Err      error
}

// Error describes the failure with the record's coordinates when known.
func (e *DecodeError) Error() string {
	schema := ""
	if e.SchemaID >= 0 {
		schema = fmt.Sprintf(" (schema %d)", e.SchemaID)
	}
	if e.Topic == "" {
		return fmt.Sprintf("decoding record%s: %v", schema, e.Err)
	}
	return fmt.Sprintf("decoding %s[%d]@%d%s: %v", e.Topic, e.Partition, e.Offset, schema, e.Err)
}

// Unwrap returns the cause, which wraps one of the package's sentinels.
func (e *DecodeError) Unwrap() error { return e.Err }

// LogValue implements slog.LogValuer so the coordinates log as attributes.
func (e *DecodeError) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("topic", e.Topic),
		slog.Int("partition", int(e.Partition)),
		slog.Int64("offset", e.Offset),
		slog.Int("schema_id", e.SchemaID),
		slog.String("err", e.Err.Error()),
	)
}

// RangeError reports a value its Delta type cannot hold (a datetime2 past
// 9999-12-31, a decimal wider than its precision, a tinyint above 255).
// It wraps [ErrOutOfRange]; the processor counts these.
type RangeError struct {
	Column string
	Type   Type
	// Value is a printable rendering of the offending source value.
	Value string
}

// Error names the column, the value and the Delta type.
func (e *RangeError) Error() string {
	return fmt.Sprintf("codecs: column %q: value %s out of range for %s", e.Column, e.Value, e.Type.DeltaName())
}

// Unwrap returns ErrOutOfRange.
func (e *RangeError) Unwrap() error { return ErrOutOfRange }

// OpError reports an envelope op this package does not know.
type OpError struct{ Op string }

// Error quotes the op.
func (e *OpError) Error() string { return fmt.Sprintf("codecs: unknown op %q", e.Op) }

// Unwrap returns ErrUnknownOp.
func (e *OpError) Unwrap() error { return ErrUnknownOp }

// SchemaChangeError lists why a new schema cannot replace a table's current
// one. Each entry names the column and what changed.
type SchemaChangeError struct {
	Problems []string
}

// Error lists the problems.
func (e *SchemaChangeError) Error() string {
	return fmt.Sprintf("codecs: unsafe schema change: %v", e.Problems)
}

// Unwrap returns ErrSchemaChange.
func (e *SchemaChangeError) Unwrap() error { return ErrSchemaChange }
