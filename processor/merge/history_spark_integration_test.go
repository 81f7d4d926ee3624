//go:build integration

package merge

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
	"github.com/cdc2delta/cdc2delta/internal/harness/cdcmodel"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// sparkWorkload is one seeded change stream, applied batch by batch to a
// history table and given to Spark's AutoCDC as the same batches.
type sparkWorkload struct {
	name    string
	opts    HistoryOptions
	oracle  fulltier.SCD2Options
	batches [][]codecs.Change
	// versions[i] is the history table's version after batch i (-1: the
	// batch committed nothing).
	versions []int64
	store    *memstore.Store
}

// inOrderBatches is a stream in source order with every shape of
// histGen: tracked and untracked updates, no-op updates, placeholders,
// deletes and re-inserts, primary-key changes, truncates, and Debezium's
// re-deliveries (the last events again in the next batch).
func inOrderBatches(r *rand.Rand, n int) [][]codecs.Change {
	g := &histGen{r: r, alive: map[int32]bool{}, name: map[int32]string{}, truncates: true, noop: true, placeholders: true}
	var sent []codecs.Change
	batches := make([][]codecs.Change, 0, n)
	for range n {
		var batch []codecs.Change
		for range 1 + r.IntN(12) {
			for _, c := range g.next() {
				batch = append(batch, c)
				sent = append(sent, c)
			}
		}
		if r.IntN(4) == 0 && len(sent) > 3 {
			batch = append(batch, sent[len(sent)-1-r.IntN(3):]...)
		}
		batches = append(batches, batch)
	}
	return batches
}

// lateBatches moves random updates and deletes up to six events later, so
// they arrive after changes that follow them in the source: late updates
// of live keys and of deleted keys, and deletes arriving after the
// re-insert. Left out, as ADR 0046 documents those as approximate: inserts
// arriving after a later delete of their key (only updates and deletes are
// moved), placeholders (a placeholder keeps the value it took when applied)
// and truncates.
func lateBatches(r *rand.Rand, n int) [][]codecs.Change {
	g := &histGen{r: r, alive: map[int32]bool{}, name: map[int32]string{}}
	var stream []codecs.Change
	for range n {
		stream = append(stream, g.next()...)
	}
	for range n / 4 {
		i := r.IntN(len(stream) - 1)
		if op := stream[i].Op; op != codecs.OpUpdate && op != codecs.OpDelete {
			continue
		}
		j := min(len(stream)-1, i+1+r.IntN(6))
		c := stream[i]
		copy(stream[i:j], stream[i+1:j+1])
		stream[j] = c
	}
	var batches [][]codecs.Change
	for len(stream) > 0 {
		k := min(len(stream), 1+r.IntN(10))
		batches = append(batches, stream[:k])
		stream = stream[k:]
	}
	return batches
}

// apply commits every batch to a fresh history table.
func (w *sparkWorkload) apply(t *testing.T) {
	w.store = memstore.New(memstore.Options{})
	opts := w.opts
	opts.Store, opts.TableName = w.store, "orders_history"
	h, err := OpenHistory(t.Context(), opts)
	require.NoError(t, err)
	offsets := map[int32]int64{}
	for _, changes := range w.batches {
		b := Batch{LastOffsets: map[cdctable.TopicPartition]int64{}}
		for _, c := range changes {
			part := int32(0)
			if c.Key != nil {
				part = c.Key[0].(int32) % 2
			}
			tp := cdctable.TopicPartition{Topic: "t", Partition: part}
			b.Records = append(b.Records, Record{TopicPartition: tp, Offset: offsets[part], Change: c})
			b.LastOffsets[tp] = offsets[part]
			offsets[part]++
		}
		v, err := h.Apply(t.Context(), b)
		require.NoError(t, err)
		w.versions = append(w.versions, v)
	}
}

// seqs ranks the workload's source positions: an event's Seq is the rank of
// its position, so a re-delivery shares its original's Seq.
func (w *sparkWorkload) seqs() map[string]int64 {
	var all []string
	for _, b := range w.batches {
		for _, c := range b {
			all = append(all, c.Pos.Hex())
		}
	}
	slices.Sort(all)
	all = slices.Compact(all)
	rank := make(map[string]int64, len(all))
	for i, p := range all {
		rank[p] = int64(i + 1)
	}
	return rank
}

// events maps the first n batches to oracle events. AutoCDC has no
// unchanged-LOB placeholder, so a placeholder gets the value the key had
// before the event in source order (NULL after a delete or truncate).
func (w *sparkWorkload) events(n int) []fulltier.SCD2Event {
	rank := w.seqs()
	// Resolve placeholders over the whole stream in source order.
	var ordered []codecs.Change
	for _, b := range w.batches {
		ordered = append(ordered, b...)
	}
	slices.SortStableFunc(ordered, func(a, b codecs.Change) int { return cmpInt(rank[a.Pos.Hex()], rank[b.Pos.Hex()]) })
	notes := map[int32]any{}
	resolved := map[string]any{}
	for _, c := range ordered {
		switch c.Op {
		case codecs.OpTruncate:
			clear(notes)
		case codecs.OpDelete:
			delete(notes, c.Key[0].(int32))
		default:
			id := c.Key[0].(int32)
			if slices.Contains(c.Unavailable, 2) {
				resolved[c.Pos.Hex()] = notes[id]
			} else {
				notes[id] = c.Row[2]
			}
		}
	}
	var out []fulltier.SCD2Event
	for bi, b := range w.batches[:n] {
		for _, c := range b {
			e := fulltier.SCD2Event{Seq: rank[c.Pos.Hex()], TS: time.UnixMilli(c.CommitMillis).UTC(), Batch: bi}
			switch c.Op {
			case codecs.OpTruncate:
				e.Op = fulltier.SCD2Truncate
				out = append(out, e)
				continue
			case codecs.OpDelete:
				e.Op = fulltier.SCD2Delete
			case codecs.OpRead:
				e.Op = fulltier.SCD2Read
			case codecs.OpCreate:
				e.Op = fulltier.SCD2Create
			default:
				e.Op = fulltier.SCD2Update
			}
			id := int64(c.Key[0].(int32))
			e.Key = map[string]any{"id": id}
			if c.Op != codecs.OpDelete {
				note := c.Row[2]
				if slices.Contains(c.Unavailable, 2) {
					note = resolved[c.Pos.Hex()]
				}
				e.Row = map[string]any{"id": id, "name": c.Row[1], "notes": note}
			}
			out = append(out, e)
		}
	}
	return out
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// rows reads the history table as it was after the first n batches and
// maps it to the oracle's form: the source columns, start and end seq.
func (w *sparkWorkload) rows(t *testing.T, n int) []fulltier.SCD2Row {
	v := int64(-1)
	for _, x := range w.versions[:n] {
		v = max(v, x)
	}
	if v < 0 {
		return []fulltier.SCD2Row{}
	}
	rank := w.seqs()
	got, err := cdcmodel.ReadVersion(t.Context(), w.store, v, []string{"id", cdcmodel.ColStartPosition})
	require.NoError(t, err)
	seq := func(x any) int64 {
		s, ok := x.(string)
		require.True(t, ok, "position %v is not text", x)
		n, ok := rank[s]
		require.True(t, ok, "position %s is no event's", s)
		return n
	}
	out := make([]fulltier.SCD2Row, 0, len(got.Rows))
	for _, r := range got.Rows {
		id := int64(r["id"].(int32))
		row := fulltier.SCD2Row{
			Key:      map[string]any{"id": id},
			Columns:  map[string]any{"id": id, "name": r["name"], "notes": r["notes"]},
			StartSeq: seq(r[cdcmodel.ColStartPosition]),
		}
		if e := r[cdcmodel.ColEndPosition]; e != nil {
			n := seq(e)
			row.EndSeq = &n
		}
		out = append(out, row)
	}
	fulltier.SortSCD2Rows(out)
	return out
}

// withoutTimes drops the commit times: the engine's are its own columns,
// the oracle's are looked up from the seqs; the seqs are compared.
func withoutTimes(rows []fulltier.SCD2Row) []fulltier.SCD2Row {
	out := make([]fulltier.SCD2Row, len(rows))
	for i, r := range rows {
		r.StartTS, r.EndTS = time.Time{}, nil
		out[i] = r
	}
	return out
}

// TestHistoryMatchesSparkAutoCDC applies seeded random change streams to a
// history table batch by batch and gives the same batches to Apache Spark's
// AutoCDC SCD type 2 (an independent implementation); after a third, two
// thirds and all of the batches the history tables must be equal in key,
// columns, start and end (positions ranked as the oracle's SEQUENCE BY).
// All scenarios run in one Spark session.
func TestHistoryMatchesSparkAutoCDC(t *testing.T) {
	types := map[string]string{"id": "bigint", "name": "string", "notes": "string"}
	var workloads []*sparkWorkload
	for seed := range uint64(3) {
		workloads = append(workloads,
			&sparkWorkload{name: fmt.Sprintf("in-order/%d", seed), oracle: fulltier.SCD2Options{Types: types},
				batches: inOrderBatches(rand.New(rand.NewPCG(seed, 57)), 8)},
			&sparkWorkload{name: fmt.Sprintf("in-order-track-name/%d", seed),
				opts:    HistoryOptions{TrackHistory: []string{"name"}},
				oracle:  fulltier.SCD2Options{TrackHistory: []string{"name"}, Types: types},
				batches: inOrderBatches(rand.New(rand.NewPCG(seed, 58)), 8)},
			&sparkWorkload{name: fmt.Sprintf("late/%d", seed), oracle: fulltier.SCD2Options{Types: types},
				batches: lateBatches(rand.New(rand.NewPCG(seed, 59)), 40)},
			&sparkWorkload{name: fmt.Sprintf("late-track-except-notes/%d", seed),
				opts:    HistoryOptions{TrackHistoryExcept: []string{"notes"}},
				oracle:  fulltier.SCD2Options{TrackHistoryExcept: []string{"notes"}, Types: types},
				batches: lateBatches(rand.New(rand.NewPCG(seed, 60)), 40)},
		)
	}
	type cut struct {
		w *sparkWorkload
		n int
	}
	cuts := map[string]cut{}
	var scenarios []fulltier.SCD2Scenario
	events := 0
	for _, w := range workloads {
		w.apply(t)
		nb := len(w.batches)
		for _, n := range slices.Compact([]int{max(1, nb/3), max(1, 2*nb/3), nb}) {
			name := fmt.Sprintf("%s@%d", w.name, n)
			ev := w.events(n)
			events += len(ev)
			cuts[name] = cut{w, n}
			scenarios = append(scenarios, fulltier.SCD2Scenario{Name: name, Events: ev, Options: w.oracle})
		}
	}
	start := time.Now()
	res := fulltier.SCD2Scenarios(t, scenarios...)
	t.Logf("spark %s: %d scenarios, %d events in %s (session %.1fs, run %.1fs, microbatches per flow %v)",
		res.Stats.SparkVersion, len(scenarios), events, time.Since(start).Round(time.Second),
		res.Stats.SessionSeconds, res.Stats.RunSeconds, res.Stats.Microbatches)
	versions := 0
	for _, s := range scenarios {
		c := cuts[s.Name]
		t.Run(s.Name, func(t *testing.T) {
			want := withoutTimes(res.Histories[s.Name])
			got := withoutTimes(c.w.rows(t, c.n))
			versions += len(want)
			require.Equal(t, want, got, "history after %d batches", c.n)
		})
	}
	t.Logf("compared %d oracle versions", versions)
	require.Greater(t, versions, 300, "the workloads gave too few versions to compare")
}
