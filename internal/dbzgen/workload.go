package dbzgen

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"time"
)

// WorkloadOptions shape a [Workload]. The zero value is 100 keys, single-event
// transactions, 10% deletes, tombstones on, no snapshot, no re-deliveries.
type WorkloadOptions struct {
	// Seed makes the sequence reproducible.
	Seed uint64
	// Keys is the number of distinct primary keys (default 100).
	Keys int
	// Snapshot starts with an initial snapshot: one op=r event per key,
	// commit_lsn = StartLSN, change_lsn and event_serial_no null.
	Snapshot bool
	// DeleteRatio is the share of changes to an existing row that delete
	// it (default 0.1; negative means none).
	DeleteRatio float64
	// MaxTxEvents is the largest number of events per source transaction
	// (default 1); all events of one share a commit_lsn.
	MaxTxEvents int
	// TransactionMetadata fills the envelope's transaction block.
	TransactionMetadata bool
	// SkipTombstones turns tombstones.on.delete off.
	SkipTombstones bool
	// Redeliver is the probability that Next returns an event it returned
	// before (from the last RedeliverWindow events) instead of a new one: a
	// duplicate, and, when newer events of that key went out since, an
	// out-of-order re-delivery. Its source block is unchanged; ProcessedAt
	// is new, as after a connector restart.
	Redeliver float64
	// RedeliverWindow bounds how far back a re-delivery reaches (default 50).
	RedeliverWindow int
	// Start is the source time of the first event (default 2024-03-15 UTC).
	Start time.Time
	// StartLSN is the LSN the workload starts after (default
	// 0000002a:00000b38:0003).
	StartLSN LSN
}

// Workload is a deterministic random stream of change events over a fixed
// key space of one table, with monotonically increasing positions. It also
// tracks the source table's current rows, which a correct sink converges to.
type Workload struct {
	table *Table
	opts  WorkloadOptions
	rng   *rand.Rand
	keys  []Row // key column values per key index

	rows    map[int]Row // current source rows by key index
	queue   []Event
	history []Event // last RedeliverWindow emitted events
	lsn     LSN
	now     time.Time
	counts  WorkloadCounts
}

// WorkloadCounts says what a workload emitted so far.
type WorkloadCounts struct {
	Reads, Creates, Updates, Deletes, Tombstones, Redeliveries int
}

// NewWorkload returns a workload over t. The table needs a key whose
// columns are integers, decimals, strings, uniqueidentifier or dates.
func NewWorkload(t *Table, o WorkloadOptions) (*Workload, error) {
	if len(t.key) == 0 {
		return nil, fmt.Errorf("%w: a workload needs a table with a key", ErrBadTable)
	}
	if o.Keys <= 0 {
		o.Keys = 100
	}
	if o.DeleteRatio == 0 {
		o.DeleteRatio = 0.1
	}
	if o.MaxTxEvents <= 0 {
		o.MaxTxEvents = 1
	}
	if o.RedeliverWindow <= 0 {
		o.RedeliverWindow = 50
	}
	if o.Start.IsZero() {
		o.Start = time.Date(2024, 3, 15, 0, 0, 0, 0, time.UTC)
	}
	if o.StartLSN.IsZero() {
		o.StartLSN = MakeLSN(0x2a, 0xb38, 3)
	}
	w := &Workload{
		table: t, opts: o,
		rng:  rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15)),
		rows: map[int]Row{}, lsn: o.StartLSN, now: o.Start,
	}
	for i := 1; i <= o.Keys; i++ {
		k := Row{}
		for _, ki := range t.key {
			c := t.columns[ki]
			v, err := keyValue(i, c.sql)
			if err != nil {
				return nil, fmt.Errorf("key column %q: %w", c.Name, err)
			}
			k[c.Name] = v
		}
		w.keys = append(w.keys, k)
	}
	if o.Snapshot {
		w.snapshot()
	}
	return w, nil
}

// Counts reports how many events of each kind Next returned.
func (w *Workload) Counts() WorkloadCounts { return w.counts }

// Rows returns the source table's current rows in key order.
func (w *Workload) Rows() []Row {
	out := make([]Row, 0, len(w.rows))
	for _, i := range slices.Sorted(maps.Keys(w.rows)) {
		out = append(out, maps.Clone(w.rows[i]))
	}
	return out
}

// Next returns the next event. It never ends.
func (w *Workload) Next() Event {
	if len(w.history) > 0 && w.opts.Redeliver > 0 && w.rng.Float64() < w.opts.Redeliver {
		ev := w.history[w.rng.IntN(len(w.history))]
		ev.ProcessedAt = w.now.Add(time.Duration(100+w.rng.IntN(900)) * time.Millisecond)
		w.counts.Redeliveries++
		return ev
	}
	if len(w.queue) == 0 {
		w.transaction()
	}
	ev := w.queue[0]
	w.queue = w.queue[1:]
	w.history = append(w.history, ev)
	if len(w.history) > w.opts.RedeliverWindow {
		w.history = w.history[1:]
	}
	switch {
	case ev.Tombstone:
		w.counts.Tombstones++
	case ev.Op == OpRead:
		w.counts.Reads++
	case ev.Op == OpCreate:
		w.counts.Creates++
	case ev.Op == OpUpdate:
		w.counts.Updates++
	case ev.Op == OpDelete:
		w.counts.Deletes++
	}
	return ev
}

// snapshot queues one op=r event per key, as an initial snapshot does.
func (w *Workload) snapshot() {
	for i := range w.keys {
		row := w.newRow(i)
		w.rows[i] = row
		marker := "true"
		switch i {
		case 0:
			marker = "first"
		case len(w.keys) - 1:
			marker = "last"
		}
		w.queue = append(w.queue, Event{
			Table: w.table, Op: OpRead, After: maps.Clone(row),
			Source:      Source{Time: w.now, Snapshot: marker, CommitLSN: w.lsn},
			ProcessedAt: w.now.Add(time.Duration(i) * time.Millisecond),
		})
	}
}

// transaction queues the events of one source transaction.
func (w *Workload) transaction() {
	w.now = w.now.Add(time.Duration(w.rng.IntN(6)) * time.Millisecond) // many changes share a ms
	n := 1 + w.rng.IntN(w.opts.MaxTxEvents)
	var evs []Event
	for range n {
		evs = append(evs, w.change())
	}
	commit := w.advance()
	processed := w.now.Add(time.Duration(50+w.rng.IntN(450)) * time.Millisecond)
	for j := range evs {
		evs[j].Source.CommitLSN = commit
		evs[j].ProcessedAt = processed
		if w.opts.TransactionMetadata {
			evs[j].Transaction = &Transaction{ID: commit.String(), TotalOrder: int64(j + 1), DataCollectionOrder: int64(j + 1)}
		}
		w.queue = append(w.queue, evs[j])
		if evs[j].Op == OpDelete && !w.opts.SkipTombstones {
			tomb := evs[j]
			tomb.Tombstone = true
			w.queue = append(w.queue, tomb)
		}
	}
}

// change picks a key and makes an insert, update or delete of it, applying
// it to the tracked rows. The commit LSN is set by the caller.
func (w *Workload) change() Event {
	i := w.rng.IntN(len(w.keys))
	ev := Event{Table: w.table, Source: Source{Time: w.now, ChangeLSN: w.advance(), SerialNo: 1}}
	old, exists := w.rows[i]
	switch {
	case !exists:
		row := w.newRow(i)
		w.rows[i] = row
		ev.Op, ev.After = OpCreate, maps.Clone(row)
	case w.rng.Float64() < w.opts.DeleteRatio:
		delete(w.rows, i)
		ev.Op, ev.Before = OpDelete, old
	default:
		row := maps.Clone(old)
		w.mutate(row)
		w.rows[i] = row
		// An update is two CDC rows (3 and 4) at one position: serial 2.
		ev.Op, ev.Before, ev.After, ev.Source.SerialNo = OpUpdate, old, maps.Clone(row), 2
	}
	return ev
}

// newRow is a random row with key i.
func (w *Workload) newRow(i int) Row {
	row := maps.Clone(w.keys[i])
	for _, c := range w.table.columns {
		if _, isKey := row[c.Name]; isKey {
			continue
		}
		row[c.Name] = w.value(c)
	}
	return row
}

// mutate changes one or two non-key columns.
func (w *Workload) mutate(row Row) {
	var cols []tableColumn
	for _, c := range w.table.columns {
		if _, isKey := w.keys[0][c.Name]; !isKey {
			cols = append(cols, c)
		}
	}
	if len(cols) == 0 {
		return
	}
	for range 1 + w.rng.IntN(2) {
		c := cols[w.rng.IntN(len(cols))]
		row[c.Name] = w.value(c)
	}
}

func (w *Workload) value(c tableColumn) any {
	if c.Nullable && w.rng.IntN(10) == 0 {
		return nil
	}
	return randomValue(w.rng, c.sql)
}

// advance moves the LSN cursor forward by a small random step and returns
// the new position.
func (w *Workload) advance() LSN {
	vlf, block, slot := w.lsn.Parts()
	slot += uint16(1 + w.rng.IntN(3))
	if slot > 0x0fff || w.rng.IntN(8) == 0 {
		block += uint32(8 + w.rng.IntN(0x100))
		slot = 1 + uint16(w.rng.IntN(4))
	}
	if block > 0x0fffffff {
		vlf, block = vlf+1, 0x10
	}
	w.lsn = MakeLSN(vlf, block, slot)
	return w.lsn
}
