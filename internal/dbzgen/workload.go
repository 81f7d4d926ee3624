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
	// SnapshotSkip names tables (TableDef.Name) that are empty when the
	// snapshot runs: it reads no row of them.
	SnapshotSkip []string
	// QuietStart is, per table name, how many transactions from the start
	// of streaming change none of its rows; one table at least must not be
	// quiet.
	QuietStart map[string]int
	// DeleteRatio is the share of changes to an existing row that delete
	// it (default 0.1; negative means none).
	DeleteRatio float64
	// KeyChangeRatio is the share of changes to an existing row that
	// update its primary key. SQL Server logs such an update as a delete
	// and an insert sharing one change LSN; Debezium emits op=d (serial 1),
	// its tombstone, then op=c for the new key (serial 2).
	KeyChangeRatio float64
	// KeyUpdateRatio is the share of changes to an existing row that
	// update its primary key where the change table logs the update as one
	// (operations 3 and 4: a singleton update under trace flag 8207; on
	// PostgreSQL and MySQL every key update). Debezium's relational emitter
	// then splits it: op=d on the old key with header __debezium.newkey,
	// its tombstone (the same header), then op=c on the new key with header
	// __debezium.oldkey, both with the update's source block (one change
	// LSN, serial 2). Zero draws nothing from the random sequence.
	KeyUpdateRatio float64
	// LateUpdate is the probability that a delete of a row is preceded, in
	// its transaction, by an update of the row that is delivered after the
	// delete and its tombstone: an update older than its key's delete that
	// arrives after it, as a re-sent event, or one that took another
	// partition, can. Its transaction block keeps its place in the source
	// transaction. Zero draws nothing from the random sequence.
	LateUpdate float64
	// MaxTxEvents is the largest number of events per source transaction
	// (default 1); all events of one share a commit_lsn.
	MaxTxEvents int
	// TransactionMetadata fills the envelope's transaction block.
	TransactionMetadata bool
	// TransactionTopic also emits the transaction topic's BEGIN before and
	// END after each streaming transaction's events (Event.Marker); it
	// implies TransactionMetadata. The snapshot has no transactions.
	TransactionTopic bool
	// LateEnd is the probability that a transaction's END is held back
	// until after the next transaction's first event, as on an Always-On
	// read-only replica (brief §7).
	LateEnd float64
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
	// Placeholders is the probability that an update leaves an unchanged
	// LOB column ((n)varchar(max), varbinary(max)) as Debezium's
	// unavailable-value [Placeholder], in both row images, as Debezium
	// 3.6+ does for LOBs the update did not modify. Rows still track the
	// real values. Zero (the default) never does, and draws nothing from
	// the random sequence.
	Placeholders float64
	// Start is the source time of the first event (default 2024-03-15 UTC).
	Start time.Time
	// StartLSN is the LSN the workload starts after (default
	// 0000002a:00000b38:0003).
	StartLSN LSN
}

// Workload is a deterministic random stream of change events over a fixed
// key space of one or more tables of a database, with monotonically
// increasing positions shared by the tables (as one SQL Server log orders
// them). It also tracks the source tables' current rows, which a correct sink
// converges to. It is not safe for concurrent use.
type Workload struct {
	opts   WorkloadOptions
	rng    *rand.Rand
	tables []*tableState

	queue   []queued
	lateEnd *queued // an END held back until the next transaction's first event
	history []Event // last RedeliverWindow emitted events
	lsn     LSN
	now     time.Time
	counts  WorkloadCounts
	txs     int // transactions generated
}

// tableState is one table of a workload.
type tableState struct {
	table *Table
	keys  []Row       // key column values per key index
	rows  map[int]Row // source rows by key index, as generated
	// emitted holds the rows as of the events Next returned: generation
	// runs a transaction ahead of emission.
	emitted map[int]Row
}

// queued is a generated event not yet returned, with what it changes.
type queued struct {
	ev    Event
	table *tableState
	key   int
	// row is the source row after the event when ev.After does not show it
	// (it carries placeholders).
	row Row
	// late marks an update delivered after a newer event of its key: it
	// does not change the emitted rows.
	late bool
}

// WorkloadCounts says what a workload emitted so far.
type WorkloadCounts struct {
	Reads, Creates, Updates, Deletes, Tombstones, Redeliveries int
	// KeyChanges counts the primary-key changes (KeyChangeRatio and
	// KeyUpdateRatio), KeyUpdates those of them with Debezium's headers.
	KeyChanges, KeyUpdates int
	// LateUpdates counts the updates delivered after their key's delete.
	LateUpdates int
	// Markers counts the transaction topic's BEGIN and END events.
	Markers int
	// Unavailable counts the updates with at least one placeholder.
	Unavailable int
}

// NewWorkload returns a workload over the tables (at least one). Each table
// needs a key whose columns are integers, decimals, strings,
// uniqueidentifier or dates.
func NewWorkload(o WorkloadOptions, tables ...*Table) (*Workload, error) {
	if len(tables) == 0 {
		return nil, fmt.Errorf("%w: a workload needs a table", ErrBadTable)
	}
	if o.Keys <= 0 {
		o.Keys = 100
	}
	if o.DeleteRatio == 0 {
		o.DeleteRatio = 0.1
	}
	if o.TransactionTopic {
		o.TransactionMetadata = true
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
		opts: o,
		rng:  rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15)),
		lsn:  o.StartLSN, now: o.Start,
	}
	for _, t := range tables {
		if len(t.key) == 0 {
			return nil, fmt.Errorf("%w: a workload needs tables with a key; %s has none", ErrBadTable, t.topic)
		}
		ts := &tableState{table: t, rows: map[int]Row{}, emitted: map[int]Row{}}
		for i := 1; i <= o.Keys; i++ {
			k := Row{}
			for _, ki := range t.key {
				c := t.columns[ki]
				v, err := keyValue(i, c.sql)
				if err != nil {
					return nil, fmt.Errorf("%s key column %q: %w", t.topic, c.Name, err)
				}
				k[c.Name] = v
			}
			ts.keys = append(ts.keys, k)
		}
		w.tables = append(w.tables, ts)
	}
	named := func(name string) bool {
		return slices.ContainsFunc(w.tables, func(ts *tableState) bool { return ts.table.def.Name == name })
	}
	for _, name := range slices.Concat(o.SnapshotSkip, slices.Collect(maps.Keys(o.QuietStart))) {
		if !named(name) {
			return nil, fmt.Errorf("%w: SnapshotSkip or QuietStart names %q, not a table of the workload", ErrBadTable, name)
		}
	}
	if !slices.ContainsFunc(w.tables, func(ts *tableState) bool { return o.QuietStart[ts.table.def.Name] <= 0 }) {
		return nil, fmt.Errorf("%w: QuietStart leaves no table for the first transactions to change", ErrBadTable)
	}
	if o.Snapshot {
		w.snapshot()
	}
	return w, nil
}

// Counts reports how many events of each kind Next returned.
func (w *Workload) Counts() WorkloadCounts { return w.counts }

// Rows returns the rows of source table t, in key order, as of the events
// Next returned so far; nil for a table the workload does not change.
func (w *Workload) Rows(t *Table) []Row {
	for _, ts := range w.tables {
		if ts.table != t {
			continue
		}
		out := make([]Row, 0, len(ts.emitted))
		for _, i := range slices.Sorted(maps.Keys(ts.emitted)) {
			out = append(out, maps.Clone(ts.emitted[i]))
		}
		return out
	}
	return nil
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
	q := w.queue[0]
	w.queue = w.queue[1:]
	ev := q.ev
	switch {
	case ev.Marker != nil:
		w.counts.Markers++
	case ev.Tombstone:
	case q.late:
	case ev.Op == OpDelete:
		delete(q.table.emitted, q.key)
	case q.row != nil:
		q.table.emitted[q.key] = q.row
	default:
		q.table.emitted[q.key] = ev.After
	}
	w.history = append(w.history, ev)
	if len(w.history) > w.opts.RedeliverWindow {
		w.history = w.history[1:]
	}
	switch {
	case ev.Marker != nil:
	case ev.Tombstone:
		w.counts.Tombstones++
	case ev.Op == OpRead:
		w.counts.Reads++
	case ev.Op == OpCreate:
		w.counts.Creates++
		if ev.OldKey != nil || ev.Source.SerialNo == 2 {
			w.counts.KeyChanges++
		}
		if ev.OldKey != nil {
			w.counts.KeyUpdates++
		}
	case ev.Op == OpUpdate:
		w.counts.Updates++
		if q.late {
			w.counts.LateUpdates++
		}
		if q.row != nil {
			w.counts.Unavailable++
		}
	case ev.Op == OpDelete:
		w.counts.Deletes++
	}
	return ev
}

// snapshot queues one op=r event per key of each table, as an initial
// snapshot does, with Debezium 3.x's snapshot markers.
func (w *Workload) snapshot() {
	n := 0
	var read []*tableState
	for _, ts := range w.tables {
		if !slices.Contains(w.opts.SnapshotSkip, ts.table.def.Name) {
			read = append(read, ts)
		}
	}
	for ti, ts := range read {
		for i := range ts.keys {
			row := w.newRow(ts, i)
			ts.rows[i] = row
			marker := "true"
			switch {
			case ti == 0 && i == 0:
				marker = "first"
			case ti == len(read)-1 && i == len(ts.keys)-1:
				marker = "last"
			case i == 0:
				marker = "first_in_data_collection"
			case i == len(ts.keys)-1:
				marker = "last_in_data_collection"
			}
			w.queue = append(w.queue, queued{ev: Event{
				Table: ts.table, Op: OpRead, After: maps.Clone(row),
				Source:      Source{Time: w.now, Snapshot: marker, CommitLSN: w.lsn},
				ProcessedAt: w.now.Add(time.Duration(n) * time.Millisecond),
			}, table: ts, key: i})
			n++
		}
	}
}

// transaction queues the events of one source transaction.
func (w *Workload) transaction() {
	w.now = w.now.Add(time.Duration(w.rng.IntN(6)) * time.Millisecond) // many changes share a ms
	n := 1 + w.rng.IntN(w.opts.MaxTxEvents)
	var evs []queued
	for range n {
		evs = append(evs, w.change()...)
	}
	w.txs++
	commit := w.advance()
	processed := w.now.Add(time.Duration(50+w.rng.IntN(450)) * time.Millisecond)
	perTable := map[*Table]int64{}
	marker := func(status string, counts map[*Table]int64) queued {
		return queued{ev: Event{Marker: &TxMarker{Status: status, ID: commit.String(), Counts: counts, ProcessedAt: processed}}}
	}
	if w.opts.TransactionTopic {
		w.queue = append(w.queue, marker(TxBegin, nil))
	}
	for j := range evs {
		ev := &evs[j].ev
		ev.Source.CommitLSN = commit
		ev.ProcessedAt = processed
		if w.opts.TransactionMetadata {
			perTable[ev.Table]++
			ev.Transaction = &Transaction{ID: commit.String(), TotalOrder: int64(j + 1), DataCollectionOrder: perTable[ev.Table]}
		}
	}
	// A late update goes out after the delete (and tombstone) that follows
	// it in the source.
	for j := 0; j+1 < len(evs); j++ {
		if evs[j].late {
			evs[j], evs[j+1] = evs[j+1], evs[j]
			j++
		}
	}
	for j := range evs {
		ev := &evs[j].ev
		w.queue = append(w.queue, evs[j])
		if j == 0 && w.lateEnd != nil {
			w.queue = append(w.queue, *w.lateEnd)
			w.lateEnd = nil
		}
		if ev.Op == OpDelete && !w.opts.SkipTombstones {
			tomb := evs[j]
			tomb.ev.Tombstone = true
			w.queue = append(w.queue, tomb)
		}
	}
	if w.opts.TransactionTopic {
		end := marker(TxEnd, perTable)
		if w.opts.LateEnd > 0 && w.rng.Float64() < w.opts.LateEnd {
			w.lateEnd = &end
		} else {
			w.queue = append(w.queue, end)
		}
	}
}

// change picks a table and key and makes an insert, update or delete of it,
// applying it to the tracked rows. The commit LSN is set by the caller.
func (w *Workload) change() []queued {
	tables := w.tables
	if len(w.opts.QuietStart) > 0 {
		tables = slices.DeleteFunc(slices.Clone(tables), func(ts *tableState) bool { return w.txs < w.opts.QuietStart[ts.table.def.Name] })
	}
	ts := tables[w.rng.IntN(len(tables))]
	i := w.rng.IntN(len(ts.keys))
	ev := Event{Table: ts.table, Source: Source{Time: w.now, ChangeLSN: w.advance(), SerialNo: 1}}
	old, exists := ts.rows[i]
	if exists && w.opts.KeyChangeRatio > 0 && w.rng.Float64() < w.opts.KeyChangeRatio {
		if j, ok := w.freeKey(ts); ok {
			return w.keyChange(ts, ev, i, j)
		}
	}
	if exists && w.opts.KeyUpdateRatio > 0 && w.rng.Float64() < w.opts.KeyUpdateRatio {
		if j, ok := w.freeKey(ts); ok {
			return w.keyUpdate(ts, ev, i, j)
		}
	}
	switch {
	case !exists:
		row := w.newRow(ts, i)
		ts.rows[i] = row
		ev.Op, ev.After = OpCreate, maps.Clone(row)
	case w.rng.Float64() < w.opts.DeleteRatio:
		if w.opts.LateUpdate > 0 && w.rng.Float64() < w.opts.LateUpdate {
			return w.lateUpdate(ts, ev, i)
		}
		delete(ts.rows, i)
		ev.Op, ev.Before = OpDelete, old
	default:
		row := maps.Clone(old)
		changed := w.mutate(ts, row)
		ts.rows[i] = row
		// An update is two CDC rows (3 and 4) at one position: serial 2.
		ev.Op, ev.Before, ev.After, ev.Source.SerialNo = OpUpdate, old, maps.Clone(row), 2
		if w.opts.Placeholders > 0 && w.unchangedLOBs(ts, &ev, changed) {
			return []queued{{ev: ev, table: ts, key: i, row: maps.Clone(row)}}
		}
	}
	return []queued{{ev: ev, table: ts, key: i}}
}

// unchangedLOBs replaces, in both images of an update, each LOB column the
// update did not change with the placeholder, with probability
// Placeholders, and reports whether it replaced any.
func (w *Workload) unchangedLOBs(ts *tableState, ev *Event, changed map[string]bool) bool {
	replaced := false
	for _, c := range ts.table.columns {
		if !c.sql.isLOB() || changed[c.Name] || w.rng.Float64() >= w.opts.Placeholders {
			continue
		}
		if !replaced {
			ev.Before = maps.Clone(ev.Before) // the source's old row stays as it was
		}
		ev.Before[c.Name], ev.After[c.Name] = Placeholder{}, Placeholder{}
		replaced = true
	}
	return replaced
}

// freeKey picks a key index with no row, if there is one.
func (w *Workload) freeKey(ts *tableState) (int, bool) {
	start := w.rng.IntN(len(ts.keys))
	for n := range ts.keys {
		j := (start + n) % len(ts.keys)
		if _, taken := ts.rows[j]; !taken {
			return j, true
		}
	}
	return 0, false
}

// keyChange moves the row of key i to key j: a delete and an insert at one
// change position, serials 1 and 2.
func (w *Workload) keyChange(ts *tableState, del Event, i, j int) []queued {
	old := ts.rows[i]
	row := maps.Clone(old)
	maps.Copy(row, ts.keys[j])
	delete(ts.rows, i)
	ts.rows[j] = row
	del.Op, del.Before = OpDelete, old
	ins := Event{Table: ts.table, Op: OpCreate, After: maps.Clone(row), Source: del.Source}
	ins.Source.SerialNo = 2
	return []queued{{ev: del, table: ts, key: i}, {ev: ins, table: ts, key: j}}
}

// keyUpdate moves the row of key i to key j as one update at one change
// position (serial 2, as every update), which Debezium emits as a delete of
// the old key and a create of the new one, each naming the other key.
func (w *Workload) keyUpdate(ts *tableState, ev Event, i, j int) []queued {
	old := ts.rows[i]
	row := maps.Clone(old)
	maps.Copy(row, ts.keys[j])
	w.mutate(ts, row)
	delete(ts.rows, i)
	ts.rows[j] = row
	ev.Source.SerialNo = 2
	del := ev
	del.Op, del.Before, del.NewKey = OpDelete, old, maps.Clone(ts.keys[j])
	ins := ev
	ins.Op, ins.After, ins.OldKey = OpCreate, maps.Clone(row), maps.Clone(ts.keys[i])
	return []queued{{ev: del, table: ts, key: i}, {ev: ins, table: ts, key: j}}
}

// lateUpdate updates the row of key i and then deletes it, at two change
// positions of one transaction; the update is delivered after the delete.
func (w *Workload) lateUpdate(ts *tableState, upd Event, i int) []queued {
	old := ts.rows[i]
	row := maps.Clone(old)
	w.mutate(ts, row)
	upd.Op, upd.Before, upd.After, upd.Source.SerialNo = OpUpdate, old, maps.Clone(row), 2
	del := Event{Table: ts.table, Op: OpDelete, Before: row, Source: Source{Time: w.now, ChangeLSN: w.advance(), SerialNo: 1}}
	delete(ts.rows, i)
	return []queued{{ev: upd, table: ts, key: i, late: true}, {ev: del, table: ts, key: i}}
}

// newRow is a random row of ts with key i.
func (w *Workload) newRow(ts *tableState, i int) Row {
	row := maps.Clone(ts.keys[i])
	for _, c := range ts.table.columns {
		if _, isKey := row[c.Name]; isKey {
			continue
		}
		row[c.Name] = w.value(c)
	}
	return row
}

// mutate changes one or two non-key columns and returns their names.
func (w *Workload) mutate(ts *tableState, row Row) map[string]bool {
	var cols []tableColumn
	for _, c := range ts.table.columns {
		if _, isKey := ts.keys[0][c.Name]; !isKey {
			cols = append(cols, c)
		}
	}
	changed := map[string]bool{}
	if len(cols) == 0 {
		return changed
	}
	for range 1 + w.rng.IntN(2) {
		c := cols[w.rng.IntN(len(cols))]
		row[c.Name] = w.value(c)
		changed[c.Name] = true
	}
	return changed
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
