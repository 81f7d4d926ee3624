package merge

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/faultstore"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// TestConcurrentWritersModel is the model check of writers that share a
// table (ADR 0036): two writers own two partitions each of a keyed stream,
// as Debezium partitions by key, and apply random batches of them to one
// table. Each writer plans on what it last saw, so that every commit of the
// other makes it lose a version race (rebase or re-plan); some commits of
// one land while the other is mid-commit; and writers are killed at random
// puts (before or after the object is durable), then reopened, resuming
// from the table's txn versions and redelivering from there; partitions
// move between them mid-commit. After every
// step the table must hold exactly the rows the events up to its txn
// versions give, by a model that knows nothing of the sink: no change lost,
// doubled or regressed. CDC2DELTA_MODEL_SEEDS widens the run.
func TestConcurrentWritersModel(t *testing.T) {
	seeds := 12
	if v, err := strconv.Atoi(os.Getenv("CDC2DELTA_MODEL_SEEDS")); err == nil && v > 0 {
		seeds = v
	}
	var rebases, replans, kills, moves int
	for seed := range seeds {
		mode := ModeDV
		if seed%4 == 3 {
			mode = ModeCoW
		}
		t.Run(fmt.Sprintf("seed%d-%s", seed, mode), func(t *testing.T) {
			r, p, k, m := runConcurrentModel(t, uint64(seed), mode)
			rebases, replans, kills, moves = rebases+r, replans+p, kills+k, moves+m
		})
	}
	t.Logf("%d seeds: %d rebases, %d re-plans, %d kills, %d partitions moved", seeds, rebases, replans, kills, moves)
	require.Positive(t, rebases, "the runs must rebase")
	require.Positive(t, replans, "the runs must re-plan")
	require.Positive(t, kills, "the runs must kill writers")
	require.Positive(t, moves, "the runs must move partitions")
}

const (
	modelPartitions = 4
	modelKeys       = 24
)

// modelStream is the events of each partition, in offset order.
type modelStream [modelPartitions][]ev

// newModelStream generates events over modelKeys keys, each key in the
// partition id % modelPartitions, positions rising.
func newModelStream(rng *rand.Rand, n int) modelStream {
	var s modelStream
	live := map[int32]bool{}
	for i := range n {
		id := int32(rng.IntN(modelKeys))
		part := id % modelPartitions
		e := ev{id: id, pos: i + 1, part: part, offset: int64(len(s[part]))}
		switch {
		case !live[id]:
			e.op, live[id] = codecs.OpCreate, true
		case rng.IntN(4) == 0:
			e.op, live[id] = codecs.OpDelete, false
		default:
			e.op = codecs.OpUpdate
		}
		if e.op != codecs.OpDelete {
			e.name = fmt.Sprintf("k%d@%d", id, e.pos)
		}
		s[part] = append(s[part], e)
	}
	return s
}

// want is the model: each key's last event among the first upTo[p]
// events of each partition p, as the rows a reader must see.
func (s modelStream) want(upTo [modelPartitions]int64) map[int32]string {
	out := map[int32]string{}
	for p := range s {
		for _, e := range s[p][:upTo[p]] {
			if e.op == codecs.OpDelete {
				delete(out, e.id)
			} else {
				out[e.id] = e.name
			}
		}
	}
	return out
}

type modelWriter struct {
	sink   *Sink
	owned  []int32
	next   [modelPartitions]int64 // the next offset to deliver, per partition
	ctx    context.Context
	cancel context.CancelFunc
}

func runConcurrentModel(t *testing.T, seed uint64, mode Mode) (rebases, replans, kills, moves int) {
	rng := rand.New(rand.NewPCG(seed, 36))
	stream := newModelStream(rng, 400)
	store := newFaultStore()
	open := func(w *modelWriter) {
		w.ctx, w.cancel = context.WithCancel(t.Context())
		s, err := Open(t.Context(), Options{Store: store, TableName: "items", Mode: mode, DeleteMode: DeleteHard, CommitRetries: 50})
		require.NoError(t, err)
		w.sink = s
		// A writer resumes after the txn versions of its partitions, as the
		// processor does (ADR 0020).
		applied := tableTxns(t, store)
		for _, p := range w.owned {
			w.next[p] = 0
			if v, ok := applied[p]; ok {
				w.next[p] = v + 1
			}
		}
	}
	writers := []*modelWriter{{owned: []int32{0, 1}}, {owned: []int32{2, 3}}}
	for _, w := range writers {
		open(w)
	}
	// batch takes up to 6 events of each partition w owns; now and then it
	// starts a few offsets back (a redelivery the txn versions must skip).
	batch := func(w *modelWriter) (Batch, bool) {
		b := Batch{LastOffsets: map[cdctable.TopicPartition]int64{}}
		for _, p := range w.owned {
			b.Owned = append(b.Owned, cdctable.TopicPartition{Topic: itemsTopic, Partition: p})
			from := w.next[p]
			if rng.IntN(5) == 0 {
				from = max(0, from-int64(rng.IntN(4)))
			}
			to := min(int64(len(stream[p])), from+int64(rng.IntN(7)))
			for _, e := range stream[p][from:to] {
				r := e.record()
				b.Records = append(b.Records, r)
				b.LastOffsets[r.TopicPartition] = r.Offset
			}
		}
		return b, len(b.Records) > 0
	}
	done := func(w *modelWriter) bool {
		for _, p := range w.owned {
			if w.next[p] < int64(len(stream[p])) {
				return false
			}
		}
		return true
	}
	// apply applies a batch of w; it reports false when w was killed.
	var apply func(w *modelWriter, depth int) bool
	apply = func(w *modelWriter, depth int) bool {
		b, ok := batch(w)
		if !ok {
			return true
		}
		var fault *faultstore.Injection
		switch other := writers[0]; {
		case depth > 0:
		case rng.IntN(3) == 0:
			if other == w {
				other = writers[1]
			}
			// The other writer commits while w is about to; now and then it
			// was just assigned one of w's partitions (a rebalance), whose
			// events w's batch holds too.
			move := len(w.owned) > 1 && rng.IntN(3) == 0
			fault = store.Inject(faultstore.Fault{Ops: faultstore.OpPutIfAbsent, Pattern: "_delta_log/*.json", Nth: 1, DelayOnly: true,
				Then: func() {
					if move {
						i := rng.IntN(len(w.owned))
						p := w.owned[i]
						w.owned = append(w.owned[:i:i], w.owned[i+1:]...)
						other.owned = append(other.owned, p)
						other.next[p] = 0
						if v, ok := tableTxns(t, store)[p]; ok {
							other.next[p] = v + 1
						}
						moves++
					}
					apply(other, depth+1)
				}})
		case rng.IntN(5) == 0:
			// A kill at one of w's next puts, before or after it is durable.
			fault = store.Inject(faultstore.Fault{Ops: faultstore.OpWrite, Nth: 1 + rng.IntN(6), AfterWrite: rng.IntN(2) == 0,
				Then: w.cancel})
		}
		res, err := w.sink.Apply(w.ctx, b)
		if fault != nil {
			fault.Remove()
		}
		if w.ctx.Err() != nil {
			// Killed: whatever the commit did stays; the writer restarts.
			kills++
			open(w)
			return false
		}
		require.NoError(t, err, "only a kill may fail a batch")
		rebases, replans = rebases+res.Rebases, replans+res.Retries
		for tp, off := range b.LastOffsets {
			w.next[tp.Partition] = max(w.next[tp.Partition], off+1)
		}
		return true
	}
	var last [modelPartitions]int64
	check := func(step int) {
		t.Helper()
		var upTo [modelPartitions]int64
		txns := tableTxns(t, store)
		if len(txns) == 0 {
			return // no table yet
		}
		for p, v := range txns {
			upTo[p] = v + 1
		}
		for p := range upTo {
			// A txn version that went back would replay its partition.
			require.GreaterOrEqual(t, upTo[p], last[p], "step %d: partition %d's txn version went back", step, p)
		}
		last = upTo
		require.Equal(t, stream.want(upTo), itemNames(t, store), "step %d: the table at txn versions %v", step, upTo)
	}
	for step := 0; !done(writers[0]) || !done(writers[1]); step++ {
		require.Less(t, step, 2000, "the writers must finish")
		w := writers[rng.IntN(2)]
		if done(w) {
			continue
		}
		apply(w, 0)
		check(step)
	}
	check(-1)
	var ends [modelPartitions]int64
	for p := range stream {
		ends[p] = int64(len(stream[p]))
	}
	require.Equal(t, stream.want(ends), itemNames(t, store), "every event applied")
	return rebases, replans, kills, moves
}

// tableTxns reads the txn versions of the table's partitions, by partition.
func tableTxns(t *testing.T, store deltalog.Store) map[int32]int64 {
	t.Helper()
	out := map[int32]int64{}
	tbl, err := deltalog.Open(t.Context(), store)
	require.NoError(t, err)
	snap, err := tbl.Snapshot(t.Context())
	if err != nil {
		require.ErrorIs(t, err, deltalog.ErrNotExist)
		return out
	}
	for id, txn := range snap.Txns() {
		tp, ok := cdctable.ParseAppID(id)
		require.True(t, ok, id)
		out[tp.Partition] = txn.Version
	}
	return out
}
