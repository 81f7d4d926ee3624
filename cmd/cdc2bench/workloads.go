package main

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// preset scales the run: the starting table and the batches of every workload.
type preset struct {
	Name     string
	BaseRows int
	// Batches is the number of batches of workloads 1 to 5.
	Batches int
	// Batch is the batch size of workloads 1, 3, 4 and 5.
	Batch int
	// UpsertBatches are the batch sizes of workloads 2a, 2b and 2c.
	UpsertBatches [3]int
	// Small and SmallBatches shape workload 6.
	Small        int
	SmallBatches int
	// Systems are the systems run when -systems is not given; nil: all.
	Systems []string
}

// presets are the sizes cdc2bench knows; tiny is for the smoke test. full
// keeps the batch counts low and leaves out the copy-on-write systems by
// default: at 10M rows each of their batches rewrites most of the table
// (minutes per batch), which would take the run far past an hour.
var presets = map[string]preset{
	"tiny":  {Name: "tiny", BaseRows: 2_000, Batches: 2, Batch: 200, UpsertBatches: [3]int{50, 200, 500}, Small: 20, SmallBatches: 3},
	"small": {Name: "small", BaseRows: 200_000, Batches: 6, Batch: 10_000, UpsertBatches: [3]int{1_000, 10_000, 50_000}, Small: 100, SmallBatches: 30},
	"full": {Name: "full", BaseRows: 10_000_000, Batches: 3, Batch: 10_000, UpsertBatches: [3]int{1_000, 10_000, 100_000}, Small: 100, SmallBatches: 10,
		Systems: []string{sysDV, sysRS, sysSpDV, sysE2E}},
}

// workload is one benchmark scenario: batches generated from the shared
// starting table.
type workload struct {
	Name    string
	Title   string
	Batch   int
	Batches int
	// S3 runs the systems on the S3 endpoint instead of local disk.
	S3  bool
	gen func(g *generator, size int) []change
}

// workloads lists the scenarios of a preset in run order.
func workloads(p preset) []workload {
	return []workload{
		{Name: "1", Title: "append-mostly: 95% inserts of increasing keys, 5% updates to the newest 1%", Batch: p.Batch, Batches: p.Batches, gen: (*generator).appendMostly},
		{Name: "2a", Title: fmt.Sprintf("uniform upserts (80%% updates, 20%% inserts), batch %d", p.UpsertBatches[0]), Batch: p.UpsertBatches[0], Batches: p.Batches, gen: (*generator).upserts},
		{Name: "2b", Title: fmt.Sprintf("uniform upserts (80%% updates, 20%% inserts), batch %d", p.UpsertBatches[1]), Batch: p.UpsertBatches[1], Batches: p.Batches, gen: (*generator).upserts},
		{Name: "2c", Title: fmt.Sprintf("uniform upserts (80%% updates, 20%% inserts), batch %d", p.UpsertBatches[2]), Batch: p.UpsertBatches[2], Batches: p.Batches, gen: (*generator).upserts},
		{Name: "3", Title: "hot set: Zipf(s=1.1) skewed updates", Batch: p.Batch, Batches: p.Batches, gen: (*generator).hotSet},
		{Name: "4", Title: "deletes only: uniform deletes of existing keys", Batch: p.Batch, Batches: p.Batches, gen: (*generator).deletes},
		{Name: "5", Title: "in-batch chains: insert/update/delete sequences of one key inside a batch", Batch: p.Batch, Batches: p.Batches, gen: (*generator).chains},
		{Name: "6-local", Title: fmt.Sprintf("small batches of %d uniform upserts, local disk", p.Small), Batch: p.Small, Batches: p.SmallBatches, gen: (*generator).upserts},
		{Name: "6-s3", Title: fmt.Sprintf("small batches of %d uniform upserts, S3 (moto)", p.Small), Batch: p.Small, Batches: p.SmallBatches, S3: true, gen: (*generator).upserts},
	}
}

// selectWorkloads keeps the workloads named in list (comma separated; "6"
// names both 6-local and 6-s3, "2" all of 2a-2c); empty keeps all.
func selectWorkloads(all []workload, list string) ([]workload, error) {
	if list == "" {
		return all, nil
	}
	var out []workload
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		matched := false
		for _, w := range all {
			if w.Name != name && workloadGroup(w.Name) != name {
				continue
			}
			matched = true
			if !slices.ContainsFunc(out, func(o workload) bool { return o.Name == w.Name }) {
				out = append(out, w)
			}
		}
		if !matched {
			return nil, fmt.Errorf("unknown workload %q", name)
		}
	}
	return out, nil
}

// workloadGroup is the number of a workload: "2" for "2b", "6" for "6-s3".
func workloadGroup(name string) string {
	return strings.TrimRight(strings.TrimSuffix(strings.TrimSuffix(name, "-local"), "-s3"), "abc")
}

// change is one generated source event.
type change struct {
	ID  int64
	Op  byte // 'c', 'u', 'd' or 'r'
	Seq int64
	Row row // zero for deletes
}

// row holds the non-key columns of the benchmark table.
type row struct {
	CustomerID int64
	Status     string
	Amount     float64
	Quantity   int32
	Note       string
	UpdatedAt  int64 // µs since the epoch, UTC
}

// generatedBatch is one batch and the table size it applies to.
type generatedBatch struct {
	Changes         []change
	TableRowsBefore int
}

// generator produces a workload's events deterministically from its seed,
// tracking which keys are live so that updates and deletes hit existing
// rows. Keys are 1..next-1; live is indexed by key.
type generator struct {
	rng  *rand.Rand
	live []bool
	rows int
	next int64
	seq  int64
	zipf *rand.Zipf
	// busy marks keys of chains still open in the current batch.
	busy map[int64]bool
}

// commitEpochMillis is the source commit time of sequence number 0.
const commitEpochMillis = 1_750_000_000_000

var statuses = []string{"new", "paid", "packed", "shipped", "delivered", "cancelled", "returned"}

const noteAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 "

// newGenerator starts from the base table of baseRows rows (keys 1..baseRows,
// sequence numbers 1..baseRows).
func newGenerator(seed uint64, baseRows int) *generator {
	g := &generator{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), live: make([]bool, baseRows+1, baseRows+baseRows/4+2), rows: baseRows, next: int64(baseRows) + 1, seq: int64(baseRows)}
	for i := 1; i <= baseRows; i++ {
		g.live[i] = true
	}
	return g
}

// commitMillis is the source commit time of sequence number seq: one event per millisecond.
func commitMillis(seq int64) int64 { return commitEpochMillis + seq }

// baseChange is the snapshot event of base row id (sequence number id): its
// values depend only on id, so every workload shares one base table.
func baseChange(seed uint64, id int64) change {
	r := rand.New(rand.NewPCG(seed^uint64(id), uint64(id)))
	return change{ID: id, Op: 'r', Seq: id, Row: randomRow(r, id)}
}

func randomRow(r *rand.Rand, seq int64) row {
	var note [40]byte
	for i := range note {
		note[i] = noteAlphabet[r.IntN(len(noteAlphabet))]
	}
	return row{
		CustomerID: 1 + r.Int64N(100_000),
		Status:     statuses[r.IntN(len(statuses))],
		Amount:     float64(r.IntN(10_000_000)) / 100,
		Quantity:   int32(1 + r.IntN(100)),
		Note:       string(note[:]),
		UpdatedAt:  commitMillis(seq) * 1000,
	}
}

// batches generates n batches of size events each.
func (g *generator) batches(w workload) []generatedBatch {
	out := make([]generatedBatch, 0, w.Batches)
	for range w.Batches {
		before := g.rows
		out = append(out, generatedBatch{Changes: w.gen(g, w.Batch), TableRowsBefore: before})
	}
	return out
}

func (g *generator) emit(op byte, id int64) change {
	g.seq++
	c := change{ID: id, Op: op, Seq: g.seq}
	switch op {
	case 'd':
		if g.live[id] {
			g.live[id] = false
			g.rows--
		}
	default:
		c.Row = randomRow(g.rng, g.seq)
		if !g.live[id] {
			g.live[id] = true
			g.rows++
		}
	}
	return c
}

// newKey reserves the next key; it becomes live when inserted.
func (g *generator) newKey() int64 {
	id := g.next
	g.next++
	g.live = append(g.live, false)
	return id
}

func (g *generator) insert() change { return g.emit('c', g.newKey()) }

// liveKey picks a live key uniformly from [lo, next), skipping busy keys.
func (g *generator) liveKey(lo int64) (int64, bool) {
	lo = max(lo, 1)
	for range 1000 {
		id := lo + g.rng.Int64N(g.next-lo)
		if g.live[id] && !g.busy[id] {
			return id, true
		}
	}
	return 0, false
}

func (g *generator) update(lo int64) change {
	id, ok := g.liveKey(lo)
	if !ok {
		return g.insert()
	}
	return g.emit('u', id)
}

func (g *generator) appendMostly(size int) []change {
	out := make([]change, 0, size)
	for range size {
		if g.rng.IntN(100) < 95 {
			out = append(out, g.insert())
			continue
		}
		out = append(out, g.update(g.next-max(1, int64(g.rows)/100)))
	}
	return out
}

func (g *generator) upserts(size int) []change {
	out := make([]change, 0, size)
	for range size {
		if g.rng.IntN(100) < 80 {
			out = append(out, g.update(1))
		} else {
			out = append(out, g.insert())
		}
	}
	return out
}

// hotSet updates keys drawn from a Zipf(1.1) distribution over the keys
// live at the start; rank r maps to a key spread over the whole table.
func (g *generator) hotSet(size int) []change {
	n := uint64(g.next - 1)
	if g.zipf == nil {
		g.zipf = rand.NewZipf(g.rng, 1.1, 1, n-1)
	}
	out := make([]change, 0, size)
	for range size {
		id := int64(1 + (g.zipf.Uint64()*2_654_435_761)%n)
		if !g.live[id] {
			out = append(out, g.update(1))
			continue
		}
		out = append(out, g.emit('u', id))
	}
	return out
}

func (g *generator) deletes(size int) []change {
	out := make([]change, 0, size)
	for range size {
		id, ok := g.liveKey(1)
		if !ok {
			break
		}
		out = append(out, g.emit('d', id))
	}
	return out
}

// chain is the remaining steps of one key's event sequence.
type chain struct {
	id  int64
	ops []byte
}

// chains interleaves up to eight open chains: new keys go insert, one to
// three updates, then half the time a delete; existing keys go update,
// update, delete. Chains still open when the batch is full end there.
func (g *generator) chains(size int) []change {
	if g.busy == nil {
		g.busy = map[int64]bool{}
	}
	var open []*chain
	out := make([]change, 0, size)
	for len(out) < size {
		if len(open) < 8 {
			c := &chain{}
			if g.rng.IntN(2) == 0 {
				c.id = g.newKey()
				c.ops = append(c.ops, 'c')
				for range 1 + g.rng.IntN(3) {
					c.ops = append(c.ops, 'u')
				}
				if g.rng.IntN(2) == 0 {
					c.ops = append(c.ops, 'd')
				}
			} else if id, ok := g.liveKey(1); ok {
				c.id, c.ops = id, []byte{'u', 'u', 'd'}
			} else {
				continue
			}
			g.busy[c.id] = true
			open = append(open, c)
		}
		i := g.rng.IntN(len(open))
		c := open[i]
		op := c.ops[0]
		out = append(out, g.emit(op, c.id))
		c.ops = c.ops[1:]
		if len(c.ops) == 0 {
			delete(g.busy, c.id)
			open = slices.Delete(open, i, i+1)
		}
	}
	// Unfinished chains stop here: their keys are ordinary rows again.
	for _, c := range open {
		delete(g.busy, c.id)
	}
	return out
}
