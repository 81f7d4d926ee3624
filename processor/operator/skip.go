package operator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/deadline"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// SkipOperation is the commitInfo.operation of a commit that moves a table
// past one record (SkipRecord). Spark has no such operation; DESCRIBE
// HISTORY shows it with its parameters.
const SkipOperation = "SKIP RECORD"

// Parameters of a SkipOperation commit (commitInfo.operationParameters).
const (
	SkipParamTopic     = "topic"
	SkipParamPartition = "partition"
	SkipParamOffset    = "offset"
	// SkipParamError is the record's decode error; empty when Force
	// skipped a record that decodes.
	SkipParamError  = "error"
	SkipParamReason = "reason"
	// SkipParamForced is "true" when the record was skipped whatever its
	// decoding said.
	SkipParamForced = "forced"
)

// Refusals of SkipRecord. Each is wrapped with the details; the typed
// errors below carry the numbers.
var (
	// ErrNotNextOffset: the offset is not the partition's next unapplied
	// offset (*NotNextOffsetError has the expected one).
	ErrNotNextOffset = errors.New("operator: not the next unapplied offset")
	// ErrNoTable: the table has no Delta log yet, so no commit can record
	// the skip; only a *NoTableError, once the record is verified.
	ErrNoTable = errors.New("operator: the table does not exist yet")
	// ErrLatestReset: the partition has no txn and no group offset, and the
	// reset policy is latest: the next run starts at the partition's end,
	// so there is no record in its way to skip.
	ErrLatestReset = errors.New("operator: the partition starts at its end (kafka.reset: latest)")
	// ErrRecordDecodes: the record decodes, so skipping it would drop a
	// valid change; SkipOptions.Force overrides.
	ErrRecordDecodes = errors.New("operator: the record decodes")
	// ErrRecordMissing: the partition holds no record at the offset
	// (*RecordMissingError says why).
	ErrRecordMissing = errors.New("operator: no record at the offset")
)

// NotNextOffsetError reports an offset SkipRecord refuses because the
// partition's next unapplied offset is Next.
type NotNextOffsetError struct {
	cdctable.TopicPartition
	Offset int64
	Next   int64
	// From says where Next comes from: the table's txn, the group's
	// committed offset or the reset policy.
	From string
}

// Error names both offsets and where the expected one comes from.
func (e *NotNextOffsetError) Error() string {
	if e.Offset < e.Next {
		return fmt.Sprintf("offset %d of %s/%d is behind the next unapplied offset %d (%s): the table does not read it again",
			e.Offset, e.Topic, e.Partition, e.Next, e.From)
	}
	return fmt.Sprintf("offset %d of %s/%d is beyond the next unapplied offset %d (%s): skipping it would drop the records before it",
		e.Offset, e.Topic, e.Partition, e.Next, e.From)
}

// Unwrap returns ErrNotNextOffset.
func (e *NotNextOffsetError) Unwrap() error { return ErrNotNextOffset }

// NoTableError reports a skip SkipRecord verified but cannot record: the
// record is the partition's next unapplied offset and does not decode (or
// Force), but the table has no Delta log yet to commit its txn to. Until the
// table exists, the group's offset decides where the partition starts.
type NoTableError struct {
	Table string
	cdctable.TopicPartition
	// Offset is the record's offset, the partition's next unapplied one.
	Offset int64
	// From says where the next unapplied offset comes from.
	From string
	// DecodeError and Forced are as in SkipResult.
	DecodeError string
	Forced      bool
}

// Error names the table and the verified record.
func (e *NoTableError) Error() string {
	return fmt.Sprintf("%s has no Delta log yet, so no commit can record the skip of offset %d of %s/%d, "+
		"its next unapplied offset (%s)", e.Table, e.Offset, e.Topic, e.Partition, e.From)
}

// Unwrap returns ErrNoTable.
func (e *NoTableError) Unwrap() error { return ErrNoTable }

// RecordMissingError reports an offset the partition holds no record at.
type RecordMissingError struct {
	cdctable.TopicPartition
	Offset int64
	// Start and End are the partition's log start and end offsets.
	Start, End int64
	// Found is the first record's offset after Offset (-1: none read).
	Found int64
}

// Error says why there is no record.
func (e *RecordMissingError) Error() string {
	where := fmt.Sprintf("%s/%d", e.Topic, e.Partition)
	switch {
	case e.Offset < e.Start:
		return fmt.Sprintf("offset %d of %s is gone: the log starts at %d (retention deleted it)", e.Offset, where, e.Start)
	case e.Offset >= e.End:
		return fmt.Sprintf("offset %d of %s is not written yet: the partition ends at %d", e.Offset, where, e.End)
	}
	return fmt.Sprintf("%s holds no record at offset %d (compacted away, or a transaction marker): the next record is at %d",
		where, e.Offset, e.Found)
}

// Unwrap returns ErrRecordMissing.
func (e *RecordMissingError) Unwrap() error { return ErrRecordMissing }

// SkipOptions say which record SkipRecord moves a table past, and how to
// reach the table, Kafka and the decoder.
type SkipOptions struct {
	// Store is the table's store; Table names it in results and errors.
	Store deltalog.Store
	Table string
	// Brokers and ClientOptions connect to Kafka as the processor does
	// (TLS, SASL).
	Brokers       []string
	ClientOptions []kgo.Opt
	// Group is the consumer group and ResetOffset its reset policy
	// ("earliest", the default, or "latest"): where a partition without a
	// txn starts (ADR 0020). The group is read, never changed.
	Group       string
	ResetOffset string
	// Decoder decodes the record as the processor would.
	Decoder *codecs.Decoder
	// The record to skip.
	cdctable.TopicPartition
	Offset int64
	// Reason is the operator's note, recorded in the commit.
	Reason string
	// Force skips a record that decodes (ErrRecordDecodes otherwise), or
	// one whose decoding needs a schema registry that does not answer.
	Force bool
	// FetchTimeout bounds each Kafka request and reading the record
	// (DefaultTimeout when 0).
	FetchTimeout time.Duration

	// BeforeCommit, when set, runs before each commit attempt: tests race
	// a concurrent commit against the skip with it.
	BeforeCommit func(attempt int)
}

// SkipResult is what SkipRecord committed.
type SkipResult struct {
	Table string
	cdctable.TopicPartition
	Offset int64
	// DecodeError is the record's decode error as recorded; empty when a
	// record that decodes was forced past.
	DecodeError string
	Forced      bool
	// Version is the table version holding the txn.
	Version int64
	// Retries is 1 when a concurrent commit forced a re-check.
	Retries int
}

// SkipRecord moves a table past one record of a partition, exactly once:
// it commits one Delta version holding only the partition's txn at Offset
// and a commitInfo (SkipOperation) naming the record, its decode error and
// the reason. The processor then resumes the partition at Offset+1 from
// the txn on its next start; the consumer group is not touched.
//
// It refuses unless Offset is the partition's next unapplied offset (txn+1;
// without a txn or a Delta log where the processor would start: the group's
// committed offset, else the log start under kafka.reset earliest; under
// latest there is none), the record exists, and it does not decode (unless
// Force). A table without a Delta log passes the same checks, then gets a
// *NoTableError, as nothing can record the skip. The check and the commit
// use one snapshot, and the commit declares the partition's txn read, so a
// concurrent commit of that txn makes it conflict; it then checks again once.
func SkipRecord(ctx context.Context, o SkipOptions) (SkipResult, error) {
	if err := o.validate(); err != nil {
		return SkipResult{}, err
	}
	tbl, err := deltalog.Open(ctx, o.Store)
	if err != nil {
		return SkipResult{}, fmt.Errorf("opening table %s: %w", o.Table, err)
	}
	cl, err := kgo.NewClient(append(slices.Clone(o.ClientOptions), kgo.SeedBrokers(o.Brokers...))...)
	if err != nil {
		return SkipResult{}, fmt.Errorf("creating the kafka client: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)

	res := SkipResult{Table: o.Table, TopicPartition: o.TopicPartition, Offset: o.Offset}
	appID := o.AppID()
	decoded := false
	for attempt := 0; ; attempt++ {
		snap, from, err := o.check(ctx, tbl, adm)
		if err != nil {
			return SkipResult{}, err
		}
		if !decoded {
			if res.DecodeError, res.Forced, err = o.decode(ctx, adm); err != nil {
				return SkipResult{}, err
			}
			decoded = true
		}
		if snap == nil {
			return SkipResult{}, &NoTableError{Table: o.Table, TopicPartition: o.TopicPartition, Offset: o.Offset,
				From: from, DecodeError: res.DecodeError, Forced: res.Forced}
		}
		op := deltalog.Operation{Name: SkipOperation, Parameters: map[string]string{
			SkipParamTopic:     o.Topic,
			SkipParamPartition: strconv.FormatInt(int64(o.Partition), 10),
			SkipParamOffset:    strconv.FormatInt(o.Offset, 10),
			SkipParamError:     res.DecodeError,
			SkipParamReason:    o.Reason,
			SkipParamForced:    strconv.FormatBool(res.Forced),
		}}
		actions := []deltalog.Action{{Txn: &deltalog.Txn{AppID: appID, Version: o.Offset}}}
		if o.BeforeCommit != nil {
			o.BeforeCommit(attempt)
		}
		// The commit read the partition's txn and no file: a concurrent
		// commit of that txn conflicts, one of other partitions does not.
		cr, err := tbl.Commit(ctx, snap, actions, op, deltalog.ReadAppIDs(appID), deltalog.ReadFiles())
		if _, ok := errors.AsType[*deltalog.ConflictError](err); ok && attempt == 0 {
			res.Retries++
			continue
		}
		if err != nil {
			return SkipResult{}, fmt.Errorf("committing the skip of %s/%d offset %d to %s: %w", o.Topic, o.Partition, o.Offset, o.Table, err)
		}
		res.Version = cr.Version
		return res, nil
	}
}

func (o *SkipOptions) validate() error {
	var bad []string
	if o.Store == nil {
		bad = append(bad, "no store")
	}
	if o.Decoder == nil {
		bad = append(bad, "no decoder")
	}
	if len(o.Brokers) == 0 {
		bad = append(bad, "no brokers")
	}
	if o.Topic == "" || o.Partition < 0 || o.Offset < 0 {
		bad = append(bad, fmt.Sprintf("no record named (topic %q, partition %d, offset %d)", o.Topic, o.Partition, o.Offset))
	}
	switch o.ResetOffset {
	case "", "earliest", "latest":
	default:
		bad = append(bad, fmt.Sprintf("reset offset %q is not earliest or latest", o.ResetOffset))
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: skip: %v", ErrOptions, bad)
	}
	if o.FetchTimeout <= 0 {
		o.FetchTimeout = DefaultTimeout
	}
	return nil
}

// check reads the latest snapshot (nil: the table has no Delta log yet)
// and verifies that Offset is the partition's next unapplied offset in it,
// by cdctable.StartOffset's rule; it returns where that offset comes from. Without a
// log nothing is applied, so the group's offset or the reset policy decides,
// as for a table without the partition's txn.
func (o *SkipOptions) check(ctx context.Context, tbl *deltalog.Table, adm *kadm.Client) (*deltalog.Snapshot, string, error) {
	snap, err := tbl.Snapshot(ctx)
	if errors.Is(err, deltalog.ErrNotExist) {
		snap, err = nil, nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("reading table %s: %w", o.Table, err)
	}
	var txn int64
	hasTxn := false
	if snap != nil {
		txn, hasTxn = snap.TxnVersion(o.AppID())
	}
	noTxn := "the table has no Delta log"
	if snap != nil {
		noTxn = "the table has no txn for the partition"
	}
	var committed *cdctable.CommittedOffset
	if !hasTxn {
		if committed, err = o.groupOffset(ctx, adm); err != nil {
			return nil, "", err
		}
	}
	next, why := cdctable.StartOffset(txn, hasTxn, committed)
	from := ""
	switch why {
	case cdctable.StartFromGroup:
		from = "the group's committed offset; " + noTxn
	case cdctable.StartFromReset:
		start, end, err := o.bounds(ctx, adm)
		if err != nil {
			return nil, "", err
		}
		if o.ResetOffset == "latest" {
			// Where a run starts is the end when it starts: unknown now,
			// and never below the end today.
			if o.Offset < start || o.Offset >= end {
				return nil, "", &RecordMissingError{TopicPartition: o.TopicPartition, Offset: o.Offset, Start: start, End: end, Found: -1}
			}
			return nil, "", fmt.Errorf("%w: %s and group %s has no offset for %s/%d, so the next run starts at the partition's end (%d now), past offset %d",
				ErrLatestReset, noTxn, o.Group, o.Topic, o.Partition, end, o.Offset)
		}
		next, from = start, "the partition's log start (kafka.reset: earliest); "+noTxn+" and the group no offset"
	default:
		// With a txn the table resumes at txn+1; an operator's pending
		// reset below it replays records the table already passed.
		next, from = txn+1, "the table's txn is "+strconv.FormatInt(txn, 10)
	}
	if o.Offset != next {
		return nil, "", &NotNextOffsetError{TopicPartition: o.TopicPartition, Offset: o.Offset, Next: next, From: from}
	}
	return snap, from, nil
}

// groupOffset is the group's committed offset of the partition (nil:
// none).
func (o *SkipOptions) groupOffset(ctx context.Context, adm *kadm.Client) (*cdctable.CommittedOffset, error) {
	if o.Group == "" {
		return nil, nil
	}
	offs, err := kafkaCall(ctx, o.FetchTimeout, func(ctx context.Context) (kadm.OffsetResponses, error) { return adm.FetchOffsets(ctx, o.Group) })
	if errors.Is(err, kerr.GroupIDNotFound) {
		return nil, nil // a group that never committed
	}
	if err != nil {
		return nil, fmt.Errorf("fetching the offsets of group %s: %w", o.Group, err)
	}
	r, ok := offs.Lookup(o.Topic, o.Partition)
	if !ok || r.At < 0 {
		return nil, nil
	}
	if r.Err != nil {
		return nil, fmt.Errorf("fetching the offset of group %s for %s/%d: %w", o.Group, o.Topic, o.Partition, r.Err)
	}
	return &cdctable.CommittedOffset{Offset: r.At, Meta: r.Metadata}, nil
}

// bounds returns the partition's log start and end offsets.
func (o *SkipOptions) bounds(ctx context.Context, adm *kadm.Client) (start, end int64, err error) {
	get := func(what string, list func(context.Context, ...string) (kadm.ListedOffsets, error)) (int64, error) {
		l, err := kafkaCall(ctx, o.FetchTimeout, func(ctx context.Context) (kadm.ListedOffsets, error) { return list(ctx, o.Topic) })
		if err != nil {
			return 0, fmt.Errorf("listing the %s offsets of %s: %w", what, o.Topic, err)
		}
		lo, ok := l.Lookup(o.Topic, o.Partition)
		if !ok {
			return 0, fmt.Errorf("listing the %s offsets of %s: %w (no partition %d)", what, o.Topic, kerr.UnknownTopicOrPartition, o.Partition)
		}
		if lo.Err != nil {
			return 0, fmt.Errorf("listing the %s offset of %s/%d: %w", what, o.Topic, o.Partition, lo.Err)
		}
		return lo.Offset, nil
	}
	if start, err = get("start", adm.ListStartOffsets); err != nil {
		return 0, 0, err
	}
	if end, err = get("end", adm.ListEndOffsets); err != nil {
		return 0, 0, err
	}
	return start, end, nil
}

// decode reads the record and decodes it: it returns the error text to
// record, or refuses a record that decodes unless Force.
func (o *SkipOptions) decode(ctx context.Context, adm *kadm.Client) (text string, forced bool, err error) {
	r, err := o.fetch(ctx, adm)
	if err != nil {
		return "", false, err
	}
	_, derr := o.Decoder.DecodeRecord(ctx, r.Topic, r.Partition, r.Offset, r.Key, r.Value)
	switch {
	case derr == nil && !o.Force:
		return "", false, fmt.Errorf("%w: record %d of %s/%d decodes; skipping it would drop a valid change",
			ErrRecordDecodes, o.Offset, o.Topic, o.Partition)
	case derr == nil:
		return "", true, nil
	case errors.Is(derr, codecs.ErrRegistry):
		// An outage says nothing about the record.
		if !o.Force {
			return "", false, fmt.Errorf("decoding record %d of %s/%d needs the schema registry, which did not answer, "+
				"so whether the record is bad is unknown; try again when it answers: %w", o.Offset, o.Topic, o.Partition, derr)
		}
		return derr.Error(), true, nil
	}
	return derr.Error(), false, nil
}

// fetch reads the record at Offset with a consumer of that one partition.
func (o *SkipOptions) fetch(ctx context.Context, adm *kadm.Client) (*kgo.Record, error) {
	start, end, err := o.bounds(ctx, adm)
	if err != nil {
		return nil, err
	}
	missing := &RecordMissingError{TopicPartition: o.TopicPartition, Offset: o.Offset, Start: start, End: end, Found: -1}
	if o.Offset < start || o.Offset >= end {
		return nil, missing
	}
	cl, err := kgo.NewClient(append(slices.Clone(o.ClientOptions),
		kgo.SeedBrokers(o.Brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{o.Topic: {o.Partition: kgo.NewOffset().At(o.Offset)}}),
		// An offset gone meanwhile is an error, not a jump elsewhere.
		kgo.ConsumeResetOffset(kgo.NoResetOffset()),
	)...)
	if err != nil {
		return nil, fmt.Errorf("creating the kafka consumer: %w", err)
	}
	defer cl.Close()
	fctx, cancel := context.WithTimeout(ctx, o.FetchTimeout)
	defer cancel()
	for {
		fs := cl.PollRecords(fctx, 100)
		if err := fctx.Err(); err != nil {
			if ctx.Err() == nil {
				err = noAnswerError{deadline.NoAnswer(fctx, err, "kafka.brokers", o.FetchTimeout)}
			}
			return nil, fmt.Errorf("reading %s/%d offset %d: %w", o.Topic, o.Partition, o.Offset, err)
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) {
			if ferr == nil {
				ferr = err
			}
		})
		if ferr != nil {
			return nil, fmt.Errorf("reading %s/%d offset %d: %w", o.Topic, o.Partition, o.Offset, ferr)
		}
		for _, r := range fs.Records() {
			switch {
			case r.Topic != o.Topic || r.Partition != o.Partition || r.Offset < o.Offset:
			case r.Offset == o.Offset:
				return r, nil
			default:
				missing.Found = r.Offset
				return nil, missing
			}
		}
	}
}
