package processor

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/internal/deadline"
)

// Policy is what happens to a record that cannot be applied because of its
// content (bad input), per table.
type Policy string

// Bad-input policies.
const (
	// PolicyFail stops the table: its partitions stop fetching, its offsets
	// stay at the last good record, and readiness reports it, until an
	// operator fixes the cause (or skips the record) and restarts.
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
	// HeaderValueDropped, present with the value's size in bytes, marks a
	// record whose value was too large for the dead-letter topic and was
	// left out.
	HeaderValueDropped = "cdc2delta.value-dropped"
)

// ErrDeadLetterTopic reports a dead-letter topic that does not exist or
// cannot be written.
var ErrDeadLetterTopic = errors.New("processor: dead-letter topic unusable")

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
	{codecs.ErrRegistryRefused, "registry_refused"},
}

// badInputReason returns the metric label of a decode error.
func badInputReason(err error) string {
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

// deadLetterOverhead is what a record batch and the record framing add to
// a record's key, value and headers; a record within the topic's
// max.message.bytes less this always fits.
const deadLetterOverhead = 512

// deadLetterRecord copies r, with its original key, value and headers, for
// the dead-letter topic, adding headers that name the error and where the
// record came from. When the copy would exceed limit bytes its value is left
// out and HeaderValueDropped gives the value's size.
func deadLetterRecord(dlq string, r *kgo.Record, cause error, limit int) (rec *kgo.Record, dropped bool) {
	h := make([]kgo.RecordHeader, 0, len(r.Headers)+5)
	h = append(h, r.Headers...)
	h = append(h,
		kgo.RecordHeader{Key: HeaderError, Value: []byte(cause.Error())},
		kgo.RecordHeader{Key: HeaderTopic, Value: []byte(r.Topic)},
		kgo.RecordHeader{Key: HeaderPartition, Value: []byte(strconv.FormatInt(int64(r.Partition), 10))},
		kgo.RecordHeader{Key: HeaderOffset, Value: []byte(strconv.FormatInt(r.Offset, 10))},
	)
	rec = &kgo.Record{Topic: dlq, Key: r.Key, Value: r.Value, Headers: h, Timestamp: r.Timestamp}
	size := deadLetterOverhead + len(r.Key) + len(r.Value)
	for _, x := range h {
		size += len(x.Key) + len(x.Value)
	}
	if limit > 0 && size > limit {
		rec.Value = nil
		rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: HeaderValueDropped, Value: []byte(strconv.Itoa(len(r.Value)))})
		return rec, true
	}
	return rec, false
}

// deadLetters produces dead-lettered records, one producer per dead-letter
// topic sized to the topic's max.message.bytes.
type deadLetters struct {
	p      *Processor
	mu     sync.Mutex
	topics map[string]*dlqTopic
}

type dlqTopic struct {
	maxBytes int
	producer *kgo.Client
}

func newDeadLetters(p *Processor) *deadLetters {
	return &deadLetters{p: p, topics: map[string]*dlqTopic{}}
}

// prepare checks, once per dead-letter topic, that the topic of source
// exists (creating it when configured to) and reads its max.message.bytes.
func (d *deadLetters) prepare(ctx context.Context, source string) error {
	_, err := d.topic(ctx, deadLetterTopic(d.p.opts.DeadLetterTopic, source))
	return err
}

func (d *deadLetters) topic(ctx context.Context, name string) (dt *dlqTopic, err error) {
	d.mu.Lock()
	dt = d.topics[name]
	d.mu.Unlock()
	if dt != nil {
		return dt, nil
	}
	ctx, cancel := context.WithTimeout(ctx, d.p.opts.DeadLetterTimeout)
	defer cancel()
	defer func() { err = d.timedOut(ctx, err) }()
	adm := kadm.NewClient(d.p.client)
	details, err := adm.ListTopics(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("checking dead-letter topic %s: %w", name, err)
	}
	td, ok := details[name]
	switch {
	case ok && td.Err == nil:
	case ok && !errors.Is(td.Err, kerr.UnknownTopicOrPartition):
		return nil, fmt.Errorf("checking dead-letter topic %s: %w", name, td.Err)
	case !d.p.opts.CreateDeadLetterTopics:
		return nil, fmt.Errorf("%w: %s does not exist", ErrDeadLetterTopic, name)
	default:
		resp, err := adm.CreateTopic(ctx, -1, -1, nil, name)
		if err == nil && resp.Err != nil && !errors.Is(resp.Err, kerr.TopicAlreadyExists) {
			err = resp.Err
		}
		if err != nil {
			return nil, fmt.Errorf("%w: creating %s: %w", ErrDeadLetterTopic, name, err)
		}
		d.p.log.Info("dead-letter topic created", "topic", name)
	}
	maxBytes := 1 << 20 // Kafka's default when the broker does not say
	if cfgs, err := adm.DescribeTopicConfigs(ctx, name); err == nil {
		if rc, err := cfgs.On(name, nil); err == nil && rc.Err == nil {
			for _, c := range rc.Configs {
				if c.Key == "max.message.bytes" && c.Value != nil {
					if n, err := strconv.Atoi(*c.Value); err == nil && n > 0 {
						maxBytes = n
					}
				}
			}
		}
	}
	producer, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(d.p.opts.Brokers...),
		kgo.WithLogger(kafkaLogger{d.p.log}),
		kgo.ProducerBatchMaxBytes(int32(maxBytes)),
		kgo.RecordRetries(3),
	}, d.p.opts.ClientOptions...)...)
	if err != nil {
		return nil, fmt.Errorf("dead-letter producer: %w", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if old := d.topics[name]; old != nil { // prepared concurrently
		producer.Close()
		return old, nil
	}
	dt = &dlqTopic{maxBytes: maxBytes, producer: producer}
	d.topics[name] = dt
	d.p.log.Info("dead-letter topic ready", "topic", name, "max_message_bytes", maxBytes)
	return dt, nil
}

// send produces the entry's record to its dead-letter topic and waits for
// the broker's acknowledgement: a record is moved past only once its copy is
// durable. A record too large for the topic goes without its value.
func (d *deadLetters) send(ctx context.Context, t *table, e *entry) error {
	name := deadLetterTopic(d.p.opts.DeadLetterTopic, e.tp.Topic)
	dt, err := d.topic(ctx, name)
	if err != nil {
		return err
	}
	rec, dropped := deadLetterRecord(name, e.raw, e.cause, dt.maxBytes)
	err = d.produce(ctx, dt, rec)
	if (errors.Is(err, kerr.MessageTooLarge) || errors.Is(err, kerr.RecordListTooLarge)) && !dropped {
		// The broker's limit is below the topic's (message.max.bytes).
		rec, dropped = deadLetterRecord(name, e.raw, e.cause, 1)
		err = d.produce(ctx, dt, rec)
	}
	switch {
	case errors.Is(err, kerr.UnknownTopicOrPartition):
		return fmt.Errorf("%w: %s: %w", ErrDeadLetterTopic, name, err)
	case err != nil:
		return fmt.Errorf("producing to dead-letter topic %s: %w", name, err)
	}
	reason := badInputReason(e.cause)
	d.p.m.deadLettered.WithLabelValues(t.path, reason).Inc()
	if dropped {
		d.p.m.deadLetterDropped.WithLabelValues(t.path).Inc()
	}
	d.p.log.Warn("record dead-lettered", "table", t.path, "topic", e.tp.Topic, "partition", e.tp.Partition, "offset", e.offset,
		"dlq", name, "reason", reason, "value_dropped", dropped, "err", e.cause)
	return nil
}

// produce produces rec and waits for its acknowledgement, at most
// DeadLetterTimeout. A record in flight cannot be recalled: one that times
// out may still land, and its retry then dead-letters it twice (the
// dead-letter topic is at least once).
func (d *deadLetters) produce(ctx context.Context, dt *dlqTopic, rec *kgo.Record) error {
	ctx, cancel := context.WithTimeout(ctx, d.p.opts.DeadLetterTimeout)
	defer cancel()
	acked := make(chan error, 1) // the promise may run after we stopped waiting
	dt.producer.Produce(ctx, rec, func(_ *kgo.Record, err error) { acked <- err })
	var err error
	select {
	case err = <-acked:
	case <-ctx.Done():
		err = ctx.Err()
	}
	return d.timedOut(ctx, err)
}

// timedOut names kafka.brokers when ctx's deadline ended a dead-letter step.
func (d *deadLetters) timedOut(ctx context.Context, err error) error {
	return deadline.NoAnswer(ctx, err, fmt.Sprintf("kafka.brokers %v", d.p.opts.Brokers), d.p.opts.DeadLetterTimeout)
}

func (d *deadLetters) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, dt := range d.topics {
		dt.producer.Close()
	}
}
