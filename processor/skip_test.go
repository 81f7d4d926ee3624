package processor

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/operator"
)

// skipOptions are SkipOptions for a record of tb, decoded like opts does.
func (pl *pipeline) skipOptions(opts Options, tb *dbzgen.Table, part int32, off int64) operator.SkipOptions {
	return operator.SkipOptions{Store: pl.store(tb), Table: tablePath(tb), Brokers: pl.brokers, Group: opts.Group,
		Decoder: opts.Decoder, TopicPartition: cdctable.TopicPartition{Topic: tb.Topic(), Partition: part}, Offset: off,
		FetchTimeout: 10 * time.Second}
}

// commitInfo reads the commitInfo of version v of a table.
func commitInfo(t *testing.T, s deltalog.Store, v int64) *deltalog.CommitInfo {
	t.Helper()
	rc, err := s.Get(t.Context(), fmt.Sprintf("_delta_log/%020d.json", v))
	require.NoError(t, err)
	defer rc.Close()
	data, err := io.ReadAll(rc)
	require.NoError(t, err)
	sc := bufio.NewScanner(bytes.NewReader(data))
	var ci *deltalog.CommitInfo
	n := 0
	for sc.Scan() {
		a, ok, err := deltalog.ParseLogLine(sc.Bytes())
		require.NoError(t, err)
		if !ok {
			continue
		}
		n++
		if a.CommitInfo != nil {
			ci = a.CommitInfo
		} else {
			require.NotNil(t, a.Txn, "a skip commits only its txn: %+v", a)
		}
	}
	require.Equal(t, 2, n, "commitInfo and one txn")
	require.NotNil(t, ci)
	return ci
}

// TestSkipRecord stops a table under bad_input: fail at a poison record,
// checks what SkipRecord refuses, skips the record and checks that a fresh
// run resumes after it with everything else applied exactly once.
func TestSkipRecord(t *testing.T) {
	ctx := t.Context()
	pl := newPipeline(t, dbzgen.WorkloadOptions{Seed: 21, Keys: 30, Snapshot: true, SkipTombstones: true})
	customers, orders := pl.tables[0], pl.tables[1]
	pl.produce(200)
	pl.produceRaw(orders.Topic(), 0, nil, []byte("not avro"))
	poison := pl.endOffsets(orders.Topic())[cdctable.TopicPartition{Topic: orders.Topic(), Partition: 0}] - 1
	pl.produce(200)
	p0 := cdctable.TopicPartition{Topic: orders.Topic(), Partition: 0}

	opts := pl.options("skip")
	r := pl.start(opts)
	require.Eventually(t, func() bool { return len(r.p.Status().Failed) == 1 }, 20*time.Second, 20*time.Millisecond)
	require.Equal(t, poison, r.p.Status().Failed[0].Offset)
	require.Eventually(t, func() bool { return pl.txns(orders)[p0] == poison-1 }, 10*time.Second, 20*time.Millisecond)
	require.Eventually(t, func() bool {
		for tp, end := range pl.endOffsets(customers.Topic()) {
			if end > 0 && pl.txns(customers)[tp] != end-1 {
				return false
			}
		}
		return true
	}, 20*time.Second, 20*time.Millisecond)
	r.close(t)

	// A caught-up partition's next record is not written yet.
	for tp, txn := range pl.txns(customers) {
		_, err := operator.SkipRecord(ctx, pl.skipOptions(opts, customers, tp.Partition, txn+1))
		require.ErrorIs(t, err, operator.ErrRecordMissing)
		require.ErrorContains(t, err, "not written yet")
		break
	}
	// After more records, a customers partition's next record decodes.
	pl.produce(60)
	var pending cdctable.TopicPartition
	pendingNext := int64(-1)
	for tp, end := range pl.endOffsets(customers.Topic()) {
		if txn, ok := pl.txns(customers)[tp]; ok && end-1 > txn {
			pending, pendingNext = tp, txn+1
		}
	}
	require.GreaterOrEqual(t, pendingNext, int64(0), "no customers partition got new records")

	// The dead-letter topic routes nowhere: customers' store stands in for
	// a table without a txn for it.
	noTxn := pl.skipOptions(opts, customers, 0, 3)
	noTxn.Topic = pl.dlq

	refusals := []struct {
		name     string
		opts     operator.SkipOptions
		wantErr  error
		wantNext int64 // ErrNotNextOffset's expected offset
		want     string
	}{
		{"already applied", pl.skipOptions(opts, orders, 0, poison-1), operator.ErrNotNextOffset, poison, "is behind the next unapplied offset"},
		{"beyond the next", pl.skipOptions(opts, orders, 0, poison+1), operator.ErrNotNextOffset, poison, "would drop the records before it"},
		{"far beyond", pl.skipOptions(opts, orders, 0, poison+100), operator.ErrNotNextOffset, poison, fmt.Sprintf("txn is %d", poison-1)},
		{"record decodes", pl.skipOptions(opts, customers, pending.Partition, pendingNext), operator.ErrRecordDecodes, 0, "would drop a valid change"},
		{"no txn, earliest", noTxn, operator.ErrNotNextOffset, 0, "log start"},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			_, err := operator.SkipRecord(ctx, tc.opts)
			require.ErrorIs(t, err, tc.wantErr)
			require.ErrorContains(t, err, tc.want)
			if tc.wantErr == operator.ErrNotNextOffset {
				ne, ok := errors.AsType[*operator.NotNextOffsetError](err)
				require.True(t, ok)
				require.Equal(t, tc.wantNext, ne.Next)
			}
		})
	}
	require.Equal(t, poison-1, pl.txns(orders)[p0], "a refusal commits nothing")

	so := pl.skipOptions(opts, orders, 0, poison)
	so.Reason = "producer bug, ticket 42"
	res, err := operator.SkipRecord(ctx, so)
	require.NoError(t, err)
	require.Equal(t, poison, res.Offset)
	require.False(t, res.Forced)
	require.Contains(t, res.DecodeError, "bad confluent wire header")
	require.Equal(t, poison, pl.txns(orders)[p0])
	ci := commitInfo(t, pl.store(orders), res.Version)
	require.Equal(t, operator.SkipOperation, ci.Operation)
	require.Equal(t, map[string]string{
		"topic": orders.Topic(), "partition": "0", "offset": fmt.Sprint(poison),
		"error": res.DecodeError, "reason": "producer bug, ticket 42", "forced": "false",
	}, ci.OperationParameters.Texts())

	_, err = operator.SkipRecord(ctx, so)
	require.ErrorIs(t, err, operator.ErrNotNextOffset, "a second skip of the same record is refused")

	r = pl.start(opts)
	pl.waitCaughtUp()
	pl.requireModel()
	require.Empty(t, r.p.Status().Failed)
	for tp, end := range pl.endOffsets(orders.Topic()) {
		require.Equal(t, end-1, pl.txns(orders)[tp], "%v", tp)
	}
	pl.requireGroupOffsets("skip")

	// An operator's replay from the start re-reads the skipped record: the
	// table got past it once and does not stop again.
	r.close(t)
	_, err = operator.ReplayFrom(ctx, pl.adm, operator.ReplayOptions{Group: "skip", Topics: pl.topics(), Partition: -1, At: time.UnixMilli(0)})
	require.NoError(t, err)
	r = pl.start(opts)
	require.Eventually(t, func() bool {
		return metricSum(t, r.reg, "cdc2delta_events_consumed_total") >= float64(poison+1)
	}, 20*time.Second, 20*time.Millisecond, "the replay re-reads the skipped record")
	pl.waitCaughtUp()
	require.Empty(t, r.p.Status().Failed, "a replayed record below the txn does not stop the table")
	pl.requireModel()
}

// TestSkipRecordRace commits a concurrent txn between SkipRecord's check and
// its commit: one of the same partition makes it re-check and refuse, one
// of another partition lets it through.
func TestSkipRecordRace(t *testing.T) {
	ctx := t.Context()
	pl := newPipeline(t, dbzgen.WorkloadOptions{Seed: 22, Keys: 10, Snapshot: true, SkipTombstones: true})
	orders := pl.tables[1]
	pl.produce(40)
	pl.produceRaw(orders.Topic(), 1, nil, []byte("not avro"))
	p1 := cdctable.TopicPartition{Topic: orders.Topic(), Partition: 1}
	poison := pl.endOffsets(orders.Topic())[p1] - 1
	opts := pl.options("race")
	r := pl.start(opts)
	require.Eventually(t, func() bool { return len(r.p.Status().Failed) == 1 }, 20*time.Second, 20*time.Millisecond)
	require.Eventually(t, func() bool { return pl.txns(orders)[p1] == poison-1 }, 10*time.Second, 20*time.Millisecond)
	r.close(t)

	// concurrent commits one txn as another writer would.
	concurrent := func(tp cdctable.TopicPartition, v int64) {
		tbl, err := deltalog.Open(ctx, pl.store(orders))
		require.NoError(t, err)
		snap, err := tbl.Snapshot(ctx)
		require.NoError(t, err)
		_, err = tbl.Commit(ctx, snap, []deltalog.Action{{Txn: &deltalog.Txn{AppID: tp.AppID(), Version: v}}},
			deltalog.Operation{Name: deltalog.OpStreamingUpdate}, deltalog.ReadAppIDs(tp.AppID()), deltalog.ReadFiles())
		require.NoError(t, err)
	}

	other := cdctable.TopicPartition{Topic: "elsewhere", Partition: 7}
	so := pl.skipOptions(opts, orders, 1, poison)
	so.BeforeCommit = func(attempt int) {
		if attempt == 0 {
			concurrent(other, 5)
		}
	}
	res, err := operator.SkipRecord(ctx, so)
	require.NoError(t, err, "another partition's txn does not conflict")
	require.Zero(t, res.Retries)
	require.Equal(t, poison, pl.txns(orders)[p1])

	// Undo, as RESTORE would, then race a skip of the same record.
	concurrent(p1, poison-1)
	so.BeforeCommit = func(attempt int) {
		if attempt == 0 {
			concurrent(p1, poison) // another skip won
		}
	}
	_, err = operator.SkipRecord(ctx, so)
	require.ErrorIs(t, err, operator.ErrNotNextOffset, "the re-check sees the winner's txn")
	require.Equal(t, poison, pl.txns(orders)[p1])
}

// TestSkipRecordForce skips a record that decodes only with Force, and
// records that it was forced.
func TestSkipRecordForce(t *testing.T) {
	ctx := t.Context()
	pl := newPipeline(t, dbzgen.WorkloadOptions{Seed: 23, Keys: 10, Snapshot: true, SkipTombstones: true})
	orders := pl.tables[1]
	pl.produce(40)
	opts := pl.options("force")
	r := pl.start(opts)
	pl.waitCaughtUp()
	r.close(t)
	pl.produce(40)
	var tp cdctable.TopicPartition
	next := int64(-1)
	for p, end := range pl.endOffsets(orders.Topic()) {
		if txn := pl.txns(orders)[p]; end-1 > txn {
			tp, next = p, txn+1
		}
	}
	require.GreaterOrEqual(t, next, int64(0))
	so := pl.skipOptions(opts, orders, tp.Partition, next)
	_, err := operator.SkipRecord(ctx, so)
	require.ErrorIs(t, err, operator.ErrRecordDecodes)
	so.Force, so.Reason = true, "known duplicate"
	res, err := operator.SkipRecord(ctx, so)
	require.NoError(t, err)
	require.True(t, res.Forced)
	require.Empty(t, res.DecodeError)
	ci := commitInfo(t, pl.store(orders), res.Version)
	require.Equal(t, "true", ci.OperationParameters.Text(operator.SkipParamForced))
	require.Equal(t, "known duplicate", ci.OperationParameters.Text(operator.SkipParamReason))
	require.Equal(t, next, pl.txns(orders)[tp])
}

// TestSkipOptionsValidate checks the options SkipRecord refuses outright.
func TestSkipOptionsValidate(t *testing.T) {
	dec, err := codecs.NewDecoder(mapSource{}, codecs.Options{})
	require.NoError(t, err)
	st, err := localstore.New(localstore.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	good := operator.SkipOptions{Store: st, Brokers: []string{"b:9092"}, Decoder: dec, TopicPartition: cdctable.TopicPartition{Topic: "t"}}
	tests := []struct {
		name   string
		change func(o *operator.SkipOptions)
		want   string
	}{
		{"no store", func(o *operator.SkipOptions) { o.Store = nil }, "no store"},
		{"no decoder", func(o *operator.SkipOptions) { o.Decoder = nil }, "no decoder"},
		{"no brokers", func(o *operator.SkipOptions) { o.Brokers = nil }, "no brokers"},
		{"negative offset", func(o *operator.SkipOptions) { o.Offset = -1 }, "offset -1"},
		{"no topic", func(o *operator.SkipOptions) { o.Topic = "" }, `topic ""`},
		{"bad reset", func(o *operator.SkipOptions) { o.ResetOffset = "middle" }, "reset offset"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := good
			tc.change(&o)
			_, err := operator.SkipRecord(t.Context(), o)
			require.ErrorIs(t, err, operator.ErrOptions)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// TestSkipNextOffset checks SkipRecord in every state a partition can be in:
// no Delta log, a log without the partition's txn, or a txn; no group
// offset, or one of ours or of an operator's, ahead of or behind the txn;
// either reset policy; an offset below, at and above the partition's next
// unapplied offset. Every record is bad, so only the offset decides. A
// table without a log cannot record a skip: SkipRecord verifies the offset
// all the same and returns a *NoTableError naming it.
func TestSkipNextOffset(t *testing.T) {
	ctx := t.Context()
	pl := newPipeline(t, dbzgen.WorkloadOptions{Seed: 24, Keys: 5})
	topic := pl.dlq // raw records that no table consumes
	for p := range int32(testPartitions) {
		for range 10 {
			pl.produceRaw(topic, p, nil, []byte("not avro"))
		}
	}
	// Partition 2 starts at 3, as after retention.
	var del kadm.Offsets
	del.Add(kadm.Offset{Topic: topic, Partition: 2, At: 3, LeaderEpoch: -1})
	resp, err := pl.adm.DeleteRecords(ctx, del)
	require.NoError(t, err)
	require.NoError(t, resp.Error())
	dec := pl.options("decoder").Decoder

	const none = -1
	type state struct {
		log   bool
		txn   int64 // none: no txn for the partition
		group int64 // none: no group offset
		ours  bool  // the group offset carries our metadata
		reset string
		part  int32
	}
	var (
		noLog      = state{txn: none, group: none}
		noLogMoved = state{txn: none, group: none, part: 2}
		noLogGroup = state{txn: none, group: 5, ours: true}
		noLogOps   = state{txn: none, group: 5}
		noLogLate  = state{txn: none, group: none, reset: "latest"}
		noTxn      = state{log: true, txn: none, group: none}
		noTxnGroup = state{log: true, txn: none, group: 5}
		noTxnLate  = state{log: true, txn: none, group: none, reset: "latest"}
		noTxnLateG = state{log: true, txn: none, group: 5, reset: "latest"}
		txn        = state{log: true, txn: 4, group: none}
		txnAhead   = state{log: true, txn: 4, group: 8, ours: true}
		txnBehind  = state{log: true, txn: 4, group: 2, ours: true}
		txnReplay  = state{log: true, txn: 4, group: 2}
		txnLate    = state{log: true, txn: 4, group: none, reset: "latest"}
	)
	tests := []struct {
		name string
		state
		offset int64
		// want: nil (skipped), ErrNoTable (verified, no log to record it),
		// ErrNotNextOffset (next is the expected one), ErrLatestReset or
		// ErrRecordMissing.
		want error
		next int64
	}{
		{"no log, log start", noLog, 0, operator.ErrNoTable, 0},
		{"no log, beyond the log start", noLog, 4, operator.ErrNotNextOffset, 0},
		{"no log, moved log start", noLogMoved, 3, operator.ErrNoTable, 3},
		{"no log, below the moved log start", noLogMoved, 1, operator.ErrNotNextOffset, 3},
		{"no log, beyond the moved log start", noLogMoved, 9, operator.ErrNotNextOffset, 3},
		{"no log, our group offset", noLogGroup, 5, operator.ErrNoTable, 5},
		{"no log, below our group offset", noLogGroup, 4, operator.ErrNotNextOffset, 5},
		{"no log, beyond our group offset", noLogGroup, 6, operator.ErrNotNextOffset, 5},
		{"no log, an operator's group offset", noLogOps, 5, operator.ErrNoTable, 5},
		{"no log, beyond an operator's group offset", noLogOps, 7, operator.ErrNotNextOffset, 5},
		{"no log, latest", noLogLate, 0, operator.ErrLatestReset, 0},
		{"no log, latest, not written yet", noLogLate, 10, operator.ErrRecordMissing, 0},
		{"no txn, log start", noTxn, 0, nil, 0},
		{"no txn, beyond the log start", noTxn, 2, operator.ErrNotNextOffset, 0},
		{"no txn, group offset", noTxnGroup, 5, nil, 0},
		{"no txn, below the group offset", noTxnGroup, 4, operator.ErrNotNextOffset, 5},
		{"no txn, beyond the group offset", noTxnGroup, 7, operator.ErrNotNextOffset, 5},
		{"no txn, latest", noTxnLate, 3, operator.ErrLatestReset, 0},
		{"no txn, latest, group offset", noTxnLateG, 5, nil, 0},
		{"txn", txn, 5, nil, 0},
		{"txn, applied", txn, 4, operator.ErrNotNextOffset, 5},
		{"txn, beyond", txn, 6, operator.ErrNotNextOffset, 5},
		{"txn, group ahead", txnAhead, 5, nil, 0},
		{"txn, at the group ahead", txnAhead, 8, operator.ErrNotNextOffset, 5},
		{"txn, our group behind", txnBehind, 5, nil, 0},
		{"txn, at our group behind", txnBehind, 2, operator.ErrNotNextOffset, 5},
		{"txn, an operator's replay behind", txnReplay, 5, nil, 0},
		{"txn, at an operator's replay", txnReplay, 2, operator.ErrNotNextOffset, 5},
		{"txn, latest", txnLate, 5, nil, 0},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tp := cdctable.TopicPartition{Topic: topic, Partition: tc.part}
			st, err := localstore.New(localstore.Options{Dir: t.TempDir()})
			require.NoError(t, err)
			if tc.log {
				createSkipTable(t, st, tp, tc.txn)
			}
			group := fmt.Sprintf("next-%d", i)
			if tc.group != none {
				meta := ""
				if tc.ours {
					meta = cdctable.GroupMeta(1)
				}
				var offs kadm.Offsets
				offs.Add(kadm.Offset{Topic: topic, Partition: tc.part, At: tc.group, LeaderEpoch: -1, Metadata: meta})
				resp, err := pl.adm.CommitOffsets(ctx, group, offs)
				require.NoError(t, err)
				require.NoError(t, resp.Error())
			}
			res, err := operator.SkipRecord(ctx, operator.SkipOptions{Store: st, Table: "t", Brokers: pl.brokers, Group: group,
				ResetOffset: tc.reset, Decoder: dec, TopicPartition: tp, Offset: tc.offset, FetchTimeout: 10 * time.Second})
			if tc.want == nil {
				require.NoError(t, err)
				require.Equal(t, tc.offset, skipTxn(t, st, tp))
				require.Equal(t, tc.offset, res.Offset)
				return
			}
			require.ErrorIs(t, err, tc.want)
			switch tc.want {
			case operator.ErrNotNextOffset:
				ne, ok := errors.AsType[*operator.NotNextOffsetError](err)
				require.True(t, ok)
				require.Equal(t, tc.next, ne.Next)
			case operator.ErrNoTable:
				ne, ok := errors.AsType[*operator.NoTableError](err)
				require.True(t, ok, "%v", err)
				require.Equal(t, tc.next, ne.Offset)
				require.Contains(t, ne.DecodeError, "bad confluent wire header")
			}
			if tc.log {
				require.Equal(t, tc.txn, skipTxn(t, st, tp), "a refusal commits nothing")
			}
		})
	}
}

// createSkipTable creates a table in st, with tp's txn at txn unless none (-1).
func createSkipTable(t *testing.T, st deltalog.Store, tp cdctable.TopicPartition, txn int64) {
	t.Helper()
	tbl, err := deltalog.Open(t.Context(), st)
	require.NoError(t, err)
	schema := &deltalog.StructType{Fields: []deltalog.StructField{{Name: "id", Type: deltalog.TypeLong}}}
	ss, err := schema.SchemaString()
	require.NoError(t, err)
	proto := deltalog.MinimalProtocol(schema, nil)
	actions := []deltalog.Action{{Protocol: &proto}, {Metadata: &deltalog.Metadata{
		ID: "skip", Format: deltalog.Format{Provider: "parquet"}, SchemaString: ss, Configuration: map[string]string{},
	}}}
	if txn >= 0 {
		actions = append(actions, deltalog.Action{Txn: &deltalog.Txn{AppID: tp.AppID(), Version: txn}})
	}
	_, err = tbl.Commit(t.Context(), nil, actions, deltalog.Operation{Name: deltalog.OpCreateTable})
	require.NoError(t, err)
}

// skipTxn is tp's txn in st's table (-1: none).
func skipTxn(t *testing.T, st deltalog.Store, tp cdctable.TopicPartition) int64 {
	t.Helper()
	tbl, err := deltalog.Open(t.Context(), st)
	require.NoError(t, err)
	snap, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	v, ok := snap.TxnVersion(tp.AppID())
	if !ok {
		return -1
	}
	return v
}
