package processor

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/processor/merge"
)

// Policy is what happens to a record that cannot be applied because of its
// content (bad input), per table.
type Policy string

// Bad-input policies.
const (
	// PolicyFail stops the table: its partitions stop fetching, its offsets
	// stay at the last good record, and readiness reports it, until an
	// operator fixes the cause and restarts.
	PolicyFail Policy = "fail"
	// PolicyDeadLetter produces the record, unchanged, to the dead-letter
	// topic with headers naming the error and its coordinates, then moves
	// past it.
	PolicyDeadLetter Policy = "dead-letter"
)

// Headers added to dead-lettered records.
const (
	HeaderError     = "cdc2delta.error"
	HeaderTopic     = "cdc2delta.topic"
	HeaderPartition = "cdc2delta.partition"
	HeaderOffset    = "cdc2delta.offset"
)

// ErrTableFailed reports a table stopped by bad input under PolicyFail or by
// an error that retrying cannot cure (such as an unsafe schema change).
var ErrTableFailed = errors.New("processor: table stopped")

// TableError is why a table stopped. Its offsets stay unapplied from Offset
// on.
type TableError struct {
	Table string
	merge.TopicPartition
	Offset int64
	Err    error
}

// Error names the table, the record and the cause.
func (e *TableError) Error() string {
	return fmt.Sprintf("table %s stopped at %s/%d offset %d: %v", e.Table, e.Topic, e.Partition, e.Offset, e.Err)
}

// Unwrap returns both ErrTableFailed and the cause.
func (e *TableError) Unwrap() []error { return []error{ErrTableFailed, e.Err} }

// badInputReasons label the bad-input metric; each sentinel the decoder can
// wrap maps to one.
var badInputReasons = []struct {
	err    error
	reason string
}{
	{codecs.ErrBadHeader, "bad_header"},
	{codecs.ErrUnknownSchema, "unknown_schema"},
	{codecs.ErrUnsupportedSchema, "unsupported_schema"},
	{codecs.ErrBadBody, "bad_body"},
	{codecs.ErrUnknownOp, "unknown_op"},
	{codecs.ErrMissingKey, "missing_key"},
	{codecs.ErrBadEnvelope, "bad_envelope"},
	{codecs.ErrOutOfRange, "out_of_range"},
	{codecs.ErrSchemaChange, "schema_change"},
}

// badInputReason returns the metric label of a decode error, or "" when the
// error is not about the record's content (a registry outage or the end of
// the context), which must be retried, never dead-lettered.
func badInputReason(err error) string {
	if errors.Is(err, codecs.ErrRegistry) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return ""
	}
	for _, r := range badInputReasons {
		if errors.Is(err, r.err) {
			return r.reason
		}
	}
	return "other"
}

// deadLetterTopic expands {topic} in the configured dead-letter topic.
func deadLetterTopic(template, topic string) string {
	return strings.ReplaceAll(template, "{topic}", topic)
}

// deadLetterRecord copies r, with its original key, value and headers, for
// the dead-letter topic, adding headers that name the error and where the
// record came from.
func deadLetterRecord(dlq string, r *kgo.Record, cause error) *kgo.Record {
	h := make([]kgo.RecordHeader, 0, len(r.Headers)+4)
	h = append(h, r.Headers...)
	h = append(h,
		kgo.RecordHeader{Key: HeaderError, Value: []byte(cause.Error())},
		kgo.RecordHeader{Key: HeaderTopic, Value: []byte(r.Topic)},
		kgo.RecordHeader{Key: HeaderPartition, Value: []byte(strconv.FormatInt(int64(r.Partition), 10))},
		kgo.RecordHeader{Key: HeaderOffset, Value: []byte(strconv.FormatInt(r.Offset, 10))},
	)
	return &kgo.Record{Topic: dlq, Key: r.Key, Value: r.Value, Headers: h, Timestamp: r.Timestamp}
}

// produceDeadLetter produces the record and waits for the broker's
// acknowledgement, retrying with backoff: a record is moved past only once
// its copy is durable.
func (p *Processor) produceDeadLetter(ctx context.Context, r *kgo.Record, cause error) error {
	dl := deadLetterRecord(deadLetterTopic(p.opts.DeadLetterTopic, r.Topic), r, cause)
	for attempt := 0; ; attempt++ {
		err := p.client.ProduceSync(ctx, dl).FirstErr()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		p.log.Warn("dead-letter produce failed; retrying", "topic", dl.Topic, "err", err, "attempt", attempt+1)
		if err := sleep(ctx, backoff(attempt)); err != nil {
			return err
		}
	}
}
