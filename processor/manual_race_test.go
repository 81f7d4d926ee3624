package processor

import (
	"context"
	"errors"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/harness/cdcmodel"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// manualEdit is one UPDATE or DELETE, in SQL for tableops and as Go for the
// model, so that the check shares nothing with what it checks.
type manualEdit struct {
	set, where string
	match      func(cdcmodel.Row) bool
	apply      func(cdcmodel.Row) // nil for a DELETE
}

// finalDelete matches the tickets the test's last DELETE removes.
func finalDelete(id int32) bool { return id%7 == 3 || id >= 30 && id <= 34 }

func ticketID(r cdcmodel.Row) int32 { id, _ := r["ticket_id"].(int32); return id }

// TestManualEditsRaceTheProcessor runs cdc2delta update and delete (their
// tableops calls, with the CDC rules the command wires) against a running
// processor on the same table, forcing each side in turn to lose the commit
// race, then re-delivers older events of the deleted keys. Every version must
// equal the model: the processor's versions applied up to their txn offsets,
// the manual ones applied to the rows of the version before them.
func TestManualEditsRaceTheProcessor(t *testing.T) {
	pl := newPipelineOf(t, dbzgen.WorkloadOptions{
		Seed: 11, Keys: 60, Snapshot: true, Placeholders: 0.6, DeleteRatio: 0.05, MaxTxEvents: 3,
	}, nil, "manual", dbzgen.Tickets())
	tb := pl.tables[0]
	procGate, dmlGate := &commitGate{}, &commitGate{}
	opts := pl.options("manual")
	opts.Sink.EnableChangeDataFeed = true
	opts.Batch = BatchLimits{Records: 40, Age: 10 * time.Millisecond, MinRecords: 1, MaxDelay: 10 * time.Millisecond} // every batch at Age
	open := opts.OpenStore
	opts.OpenStore = func(ctx context.Context, path string) (deltalog.Store, error) {
		s, err := open(ctx, path)
		return procGate.wrap(s), err
	}
	pl.produce(300)
	r := pl.start(opts)
	pl.waitCaughtUp()

	edits := []manualEdit{
		{where: "ticket_id % 6 = 2", match: func(r cdcmodel.Row) bool { return ticketID(r)%6 == 2 }},
		{set: "status = 'redacted', body = 'redacted'", where: "ticket_id % 5 = 1",
			match: func(r cdcmodel.Row) bool { return ticketID(r)%5 == 1 },
			apply: func(r cdcmodel.Row) { r["status"], r["body"] = "redacted", "redacted" }},
		{where: "status IS NULL OR ticket_id BETWEEN 20 AND 24", match: func(r cdcmodel.Row) bool {
			id := ticketID(r)
			return r["status"] == nil || id >= 20 && id <= 24
		}},
		{set: "priority = NULL", where: "ticket_id % 4 = 0 AND status <> 'redacted'",
			match: func(r cdcmodel.Row) bool {
				s, ok := r["status"].(string)
				return ticketID(r)%4 == 0 && ok && s != "redacted"
			},
			apply: func(r cdcmodel.Row) { r["priority"] = nil }},
		// The last one, alone once the table caught up, deletes the keys
		// whose older events are delivered again.
		{where: "ticket_id % 7 = 3 OR ticket_id BETWEEN 30 AND 34", match: func(r cdcmodel.Row) bool { return finalDelete(ticketID(r)) }},
	}
	ctx := t.Context()
	dmlStore := dmlGate.wrap(pl.store(tb))
	run := func(e manualEdit) tableops.DMLMetrics {
		tbl, err := deltalog.Open(ctx, dmlStore)
		require.NoError(t, err)
		snap, err := tbl.Snapshot(ctx)
		require.NoError(t, err)
		rules, err := cdctable.ManualEditsFor(snap.Metadata(), dmlStore, nil)
		require.NoError(t, err)
		o := tableops.DMLOptions{Protected: rules.Protected(), OnDelete: rules.RecordDeletes}
		var m tableops.DMLMetrics
		if e.apply != nil {
			m, err = tableops.Update(ctx, tbl, snap, []string{e.set}, e.where, o)
		} else {
			m, err = tableops.Delete(ctx, tbl, snap, e.where, o)
		}
		require.NoError(t, err, e.where)
		require.GreaterOrEqual(t, m.Version, int64(0), "%s matched no row", e.where)
		return m
	}
	for i, e := range edits[:len(edits)-1] {
		if i%2 == 0 {
			// The processor loses: its next commit waits until the edit landed.
			procGate.arm(nil)
			pl.produce(60)
			procGate.waitHeld(t)
			run(e)
			procGate.release()
		} else {
			// The edit loses: its commit waits until the processor took the version.
			dmlGate.arm(func(ctx context.Context, s deltalog.Store, path string) {
				pl.produce(60)
				require.Eventually(t, func() bool { _, err := s.Get(ctx, path); return err == nil }, 10*time.Second, 5*time.Millisecond)
			})
			m := run(e)
			require.Positive(t, m.Retries, "%s was planned again after losing the race", e.where)
		}
		pl.produce(40)
	}
	pl.waitCaughtUp()
	run(edits[len(edits)-1])
	require.EqualValues(t, 2, procGate.lost.Load(), "the processor lost the race to each held edit")
	require.EqualValues(t, 2, dmlGate.lost.Load(), "each held edit lost the race to the processor")
	t.Logf("the processor re-applied %v batches after conflicts", metricSum(t, r.reg, "cdc2delta_commit_conflict_retries_total"))

	// Older events of manually deleted keys, delivered again, stay deleted.
	recs := pl.consumeAll(tb.Topic(), opts.Decoder)
	live := map[int32]bool{}
	for _, row := range pl.liveTickets() {
		live[row] = true
	}
	resurrecting := 0
	for _, rec := range pl.rawRecords(tb.Topic(), recs) {
		id := rec.change.Key[0].(int32)
		if !finalDelete(id) || live[id] || rec.change.Op == codecs.OpDelete {
			continue
		}
		pl.produceRaw(tb.Topic(), rec.Partition, rec.Key, rec.Value)
		resurrecting++
	}
	require.Positive(t, resurrecting, "older events of deleted keys were delivered again")
	pl.waitCaughtUp()
	r.close(t)
	for _, id := range pl.liveTickets() {
		require.False(t, finalDelete(id), "ticket %d came back", id)
	}
	compareWithEdits(t, pl.store(tb), pl.consumeAll(tb.Topic(), opts.Decoder), edits)
}

// liveTickets are the table's live ticket ids.
func (pl *pipeline) liveTickets() []int32 {
	v, err := cdcmodel.ReadVersion(pl.t.Context(), pl.store(pl.tables[0]), pl.latest(), []string{"ticket_id"})
	require.NoError(pl.t, err)
	var out []int32
	for _, r := range v.Rows {
		out = append(out, ticketID(r))
	}
	return out
}

func (pl *pipeline) latest() int64 {
	tbl, err := deltalog.Open(pl.t.Context(), pl.store(pl.tables[0]))
	require.NoError(pl.t, err)
	snap, err := tbl.Snapshot(pl.t.Context())
	require.NoError(pl.t, err)
	return snap.Version()
}

type rawRecord struct {
	*kgo.Record
	change codecs.Change
}

// rawRecords reads topic's records again with their bytes, paired with the
// decoded ones (same order: by partition, then offset).
func (pl *pipeline) rawRecords(topic string, decoded []cdcmodel.Record) []rawRecord {
	byOffset := map[cdcmodel.TopicPartition]map[int64]codecs.Change{}
	for _, d := range decoded {
		if byOffset[d.TopicPartition] == nil {
			byOffset[d.TopicPartition] = map[int64]codecs.Change{}
		}
		byOffset[d.TopicPartition][d.Offset] = d.Change
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(pl.brokers...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(pl.t, err)
	defer cl.Close()
	var out []rawRecord
	for len(out) < len(decoded) {
		fs := cl.PollFetches(pl.t.Context())
		require.NoError(pl.t, fs.Err())
		fs.EachRecord(func(r *kgo.Record) {
			ch, ok := byOffset[cdcmodel.TopicPartition{Topic: r.Topic, Partition: r.Partition}][r.Offset]
			require.True(pl.t, ok)
			out = append(out, rawRecord{Record: r, change: ch})
		})
	}
	return out
}

// compareWithEdits is compareVersions with manual edits: a version whose
// commitInfo names UPDATE or DELETE is the next edit, applied by the model to
// the rows of the version before it.
func compareWithEdits(t *testing.T, store deltalog.Store, recs []cdcmodel.Record, edits []manualEdit) {
	model := cdcmodel.New(cdcmodel.Options{})
	for _, r := range recs {
		model.Feed(r)
	}
	tbl, err := deltalog.Open(t.Context(), store)
	require.NoError(t, err)
	last, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	next := 0
	for v := int64(0); v <= last.Version(); v++ {
		got, err := cdcmodel.ReadVersion(t.Context(), store, v, []string{"ticket_id"})
		require.NoError(t, err, "version %d", v)
		ci, err := tbl.CommitInfo(t.Context(), v)
		require.NoError(t, err, "version %d", v)
		var want cdcmodel.Commit
		switch ci.Operation {
		case deltalog.OpUpdate, deltalog.OpDelete:
			require.Less(t, next, len(edits), "version %d: an edit the test did not make", v)
			e := edits[next]
			next++
			if e.apply != nil {
				want = model.UpdateWhere(e.match, e.apply)
			} else {
				want = model.DeleteWhere(e.match)
			}
		default:
			upTo := map[cdcmodel.TopicPartition]int64{}
			for app, off := range got.Txns {
				tp, ok := cdctable.ParseAppID(app)
				require.True(t, ok, app)
				upTo[cdcmodel.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}] = off
			}
			var ok bool
			want, ok = model.Commit(upTo)
			require.True(t, ok, "version %d (%s) advances no txn", v, ci.Operation)
		}
		cols := model.Columns()
		require.Equal(t, cdcmodel.RenderRows(model.Rows(), cols), cdcmodel.RenderRows(got.Rows, cols), "version %d (%s): rows", v, ci.Operation)
		require.Equal(t, cdcmodel.RenderChanges(want.Changes, cols), cdcmodel.RenderChanges(got.Changes, cols), "version %d (%s): change data feed", v, ci.Operation)
	}
	require.Equal(t, len(edits), next, "every edit is a version")
	t.Logf("%d versions, %d of them manual edits, equal the model", last.Version()+1, next)
}

// commitGate holds a store's next commit (a PutIfAbsent of a log entry) when
// armed, and counts commits that found their version taken.
type commitGate struct {
	mu     sync.Mutex
	armed  bool
	before func(ctx context.Context, s deltalog.Store, path string) // run instead of waiting for release
	held   chan struct{}                                            // closed once a commit waits
	open   chan struct{}                                            // closed by release
	lost   atomic.Int32
}

var logEntry = regexp.MustCompile(`_delta_log/\d{20}\.json$`)

func (g *commitGate) wrap(s deltalog.Store) deltalog.Store { return &gatedStore{Store: s, g: g} }

// arm makes the next commit wait: for before to return when given, else for
// release.
func (g *commitGate) arm(before func(ctx context.Context, s deltalog.Store, path string)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed, g.before = true, before
	g.held, g.open = make(chan struct{}), make(chan struct{})
}

func (g *commitGate) waitHeld(t *testing.T) {
	select {
	case <-g.held:
	case <-time.After(20 * time.Second):
		t.Fatal("no commit reached the gate")
	}
}

func (g *commitGate) release() { close(g.open) }

type gatedStore struct {
	deltalog.Store
	g *commitGate
}

func (s *gatedStore) PutIfAbsent(ctx context.Context, path string, data []byte) error {
	if !logEntry.MatchString(path) {
		return s.Store.PutIfAbsent(ctx, path, data)
	}
	g := s.g
	g.mu.Lock()
	armed, before, held, open := g.armed, g.before, g.held, g.open
	g.armed = false
	g.mu.Unlock()
	if armed {
		close(held)
		if before != nil {
			before(ctx, s.Store, path)
		} else {
			select {
			case <-open:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	err := s.Store.PutIfAbsent(ctx, path, data)
	if armed && errors.Is(err, deltalog.ErrExist) {
		g.lost.Add(1)
	}
	return err
}
