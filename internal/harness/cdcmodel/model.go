// Package cdcmodel is the reference model of a table kept by cdc2delta: it
// applies Debezium change events one at a time, in arrival order, and says
// what every committed table version must hold (ADR 0025). Tests compare
// the MERGE engine and the processor against it: Feed records in arrival
// order, Commit up to each commit's txn versions, and compare the version
// ReadVersion reads back with Rows, Columns and the Commit's change feed.
//
// # Source order
//
// Kafka keeps the events of one key in order within its partition, and
// partitions interleave arbitrarily. The only events of a key that arrive
// after a later event of the same key are re-deliveries (duplicates) of
// events already seen. Applying events in arrival order with the position
// guard is therefore applying them in source order: an event at or below
// the position stored for its key, the position of the key's hard delete,
// or the latest truncate is ignored. The model trusts this; a workload that
// breaks it (a new event of a key arriving after a later one) has no
// single right answer for columns a change did not carry.
//
// # Rules
//
//   - c, r and u write the row image; d removes the row and remembers the
//     key's position (hard mode), or writes the before image flagged
//     deleted (soft mode).
//   - A column the event marks unavailable (Debezium's placeholder for an
//     unchanged LOB) keeps the value of the key's current row. A deleted,
//     truncated or never seen row is no earlier image: the column is NULL
//     and counted in Commit.Unresolved.
//   - A truncate at T removes the rows whose position is at or below T, and
//     only those: a row written by a later change that arrived first stays.
//   - Records at or below a partition's committed offset are ignored, as the
//     engine ignores records at or below the partition's txn version.
//
// The model shares no code with the engine; it uses codecs for its input
// and renders values as package datafile reads them.
//
// The package carries no API-stability promise.
package cdcmodel

import (
	"fmt"
	"slices"

	"github.com/cdc2delta/cdc2delta/codecs"
)

// Metadata columns of a cdc2delta table (ADR 0021, 0022).
const (
	ColPosition   = "_cdc_position"
	ColOp         = "_cdc_op"
	ColCommitTime = "_cdc_commit_time"
	ColDeleted    = "_cdc_deleted"
)

// Change types of the change data feed (ADR 0024).
const (
	Insert          = "insert"
	UpdatePreimage  = "update_preimage"
	UpdatePostimage = "update_postimage"
	Delete          = "delete"
)

// TopicPartition names a Kafka partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// Record is one decoded Kafka record.
type Record struct {
	TopicPartition
	Offset int64
	Change codecs.Change
}

// Row is a table row by column name, metadata columns included, with values
// as datafile reads them (decimal128.Num for decimals, as the decoder gives them). A missing column
// is NULL.
type Row map[string]any

// Change is one row of the change data feed.
type Change struct {
	Type string
	Row  Row
}

// Commit is what one committed table version must hold besides its rows.
type Commit struct {
	// Changes is the version's change data feed, in no particular order.
	Changes []Change
	// Unresolved counts the unavailable columns of applied events that had
	// no earlier image of their key; they hold NULL. Events that a truncate
	// of the same commit removes do not count: no version holds their rows.
	Unresolved int
}

// Options configure a Model.
type Options struct {
	// SoftDelete models the soft-delete mode: a delete keeps the row with
	// _cdc_deleted = true.
	SoftDelete bool
}

// Model is a table in the making. It is not safe for concurrent use.
type Model struct {
	opts      Options
	rows      map[string]Row             // live rows by key (soft-deleted ones too)
	deletes   map[string]codecs.Position // hard deletes by key
	floor     codecs.Position            // the latest truncate
	columns   []string                   // source columns, in order of appearance
	created   int                        // how many of columns the table was created with
	keys      []string                   // key columns
	committed map[TopicPartition]int64
	pending   []Record
	fed       map[TopicPartition]map[int64]bool // offsets pending
}

// New returns an empty model: no table yet.
func New(opts Options) *Model {
	return &Model{opts: opts, rows: map[string]Row{}, deletes: map[string]codecs.Position{},
		committed: map[TopicPartition]int64{}, fed: map[TopicPartition]map[int64]bool{}}
}

// Feed queues a record, in arrival order. A record whose partition and
// offset were fed before is ignored (a consumer reading it again).
func (m *Model) Feed(r Record) {
	if off, ok := m.committed[r.TopicPartition]; ok && r.Offset <= off || m.fed[r.TopicPartition][r.Offset] {
		return
	}
	if m.fed[r.TopicPartition] == nil {
		m.fed[r.TopicPartition] = map[int64]bool{}
	}
	m.fed[r.TopicPartition][r.Offset] = true
	m.pending = append(m.pending, r)
}

// Commit applies, in the order fed, the queued records at or below upTo's
// offset of their partition (a commit's txn versions), and returns what the
// version committing them must hold. ok is false when no commit is due:
// upTo advances no partition, or the table does not exist yet and no
// record carries a schema to create it from.
func (m *Model) Commit(upTo map[TopicPartition]int64) (c Commit, ok bool) {
	var take, keep []Record
	for _, r := range m.pending {
		if off, in := upTo[r.TopicPartition]; in && r.Offset <= off {
			take = append(take, r)
		} else {
			keep = append(keep, r)
		}
	}
	m.pending = keep
	for _, r := range take {
		delete(m.fed[r.TopicPartition], r.Offset)
	}
	for tp, off := range upTo {
		if cur, in := m.committed[tp]; !in || off > cur {
			ok = true
		}
	}
	before := map[string]Row{} // the rows, before this commit, of the keys it touches
	var truncate *codecs.Position
	unresolved := make([]int, len(take))
	for i, r := range take {
		unresolved[i] = m.apply(&r, before)
		if r.Change.Op == codecs.OpTruncate && (truncate == nil || r.Change.Pos.Compare(*truncate) > 0) {
			truncate = &r.Change.Pos
		}
	}
	if m.created == 0 || !ok {
		return Commit{}, false
	}
	for i, n := range unresolved {
		if truncate == nil || take[i].Change.Pos.Compare(*truncate) > 0 {
			c.Unresolved += n
		}
	}
	for tp, off := range upTo {
		m.committed[tp] = max(m.committed[tp], off)
	}
	for k, old := range before {
		cur := m.rows[k]
		switch {
		case old != nil && truncate != nil && position(old).Compare(*truncate) <= 0:
			// The truncate removed the stored row; what stands now is new.
			c.Changes = append(c.Changes, m.change(Delete, old))
			if cur != nil {
				c.Changes = append(c.Changes, m.change(Insert, cur))
			}
		case old == nil && cur != nil:
			c.Changes = append(c.Changes, m.change(Insert, cur))
		case old != nil && cur == nil:
			c.Changes = append(c.Changes, m.change(Delete, old))
		case old != nil && cur[ColPosition] != old[ColPosition]:
			c.Changes = append(c.Changes, m.change(UpdatePreimage, old), m.change(UpdatePostimage, cur))
		}
	}
	return c, true
}

// apply applies one record and returns its unresolved columns; before
// collects the first prior row (nil for none) of every key it changes.
func (m *Model) apply(r *Record, before map[string]Row) (unresolved int) {
	ch := &r.Change
	if ch.Layout != nil && ch.KeyLayout != nil {
		for _, col := range ch.Layout.Columns {
			if !slices.Contains(m.columns, col.Name) {
				m.columns = append(m.columns, col.Name)
			}
		}
		if m.created == 0 {
			// The first schema creates the table; later columns are added.
			m.created = len(m.columns)
			for _, col := range ch.KeyLayout.Columns {
				m.keys = append(m.keys, col.Name)
			}
		}
	}
	remember := func(k string) {
		if _, ok := before[k]; !ok {
			before[k] = m.rows[k]
		}
	}
	switch ch.Op {
	case codecs.OpTombstone:
		return 0
	case codecs.OpTruncate:
		for k, row := range m.rows {
			if position(row).Compare(ch.Pos) <= 0 {
				remember(k)
				delete(m.rows, k)
			}
		}
		if ch.Pos.Compare(m.floor) > 0 {
			m.floor = ch.Pos
		}
		return 0
	}
	k := renderKey(keyValues(ch, m.keys))
	if ch.Pos.Compare(m.floor) <= 0 {
		return 0
	}
	if old, ok := m.rows[k]; ok && ch.Pos.Compare(position(old)) <= 0 {
		return 0
	}
	if del, ok := m.deletes[k]; ok && ch.Pos.Compare(del) <= 0 {
		return 0
	}
	remember(k)
	if ch.Op == codecs.OpDelete && !m.opts.SoftDelete {
		delete(m.rows, k)
		m.deletes[k] = ch.Pos
		return 0
	}
	prev := m.rows[k]
	if prev != nil && prev[ColDeleted] == true {
		prev = nil // a delete ends the key's chain of images
	}
	row := Row{ColPosition: ch.Pos.Hex(), ColOp: string(ch.Op), ColCommitTime: ch.CommitMillis * 1000}
	if m.opts.SoftDelete {
		row[ColDeleted] = ch.Op == codecs.OpDelete
	}
	for i, col := range ch.Layout.Columns {
		switch {
		case !slices.Contains(ch.Unavailable, i):
			row[col.Name] = ch.Row[i]
		case prev != nil:
			row[col.Name] = prev[col.Name]
		default:
			row[col.Name] = nil
			unresolved++
		}
	}
	m.rows[k] = row
	return unresolved
}

// change renders a row of the change data feed with every column.
func (m *Model) change(typ string, r Row) Change {
	out := Row{}
	for _, c := range m.Columns() {
		out[c] = r[c]
	}
	return Change{Type: typ, Row: out}
}

// Rows returns the table's rows by key (see RowKey), every column present.
func (m *Model) Rows() map[string]Row {
	out := make(map[string]Row, len(m.rows))
	for k, r := range m.rows {
		out[k] = m.change("", r).Row
	}
	return out
}

// Columns returns the table's columns: the source columns of the schema it
// was created with, the metadata columns, then source columns added later.
func (m *Model) Columns() []string {
	cols := append(slices.Clone(m.columns[:m.created]), ColPosition, ColOp, ColCommitTime)
	if m.opts.SoftDelete {
		cols = append(cols, ColDeleted)
	}
	return append(cols, m.columns[m.created:]...)
}

// KeyColumns returns the key columns, nil before the first keyed record.
func (m *Model) KeyColumns() []string { return slices.Clone(m.keys) }

// RowKey renders a row's key values (in KeyColumns order), as the keys of
// Rows.
func RowKey(r Row, keyColumns []string) string {
	vals := make([]any, len(keyColumns))
	for i, c := range keyColumns {
		vals[i] = r[c]
	}
	return renderKey(vals)
}

func renderKey(vals []any) string { return fmt.Sprintf("%#v", vals) }

// keyValues returns the event's key values in the order of names.
func keyValues(ch *codecs.Change, names []string) []any {
	vals := make([]any, len(names))
	for i, n := range names {
		for j, col := range ch.KeyLayout.Columns {
			if col.Name == n {
				vals[i] = ch.Key[j]
			}
		}
	}
	return vals
}

func position(r Row) codecs.Position {
	p, err := codecs.PositionFromHex(r[ColPosition].(string))
	if err != nil {
		panic(err) // the model wrote it
	}
	return p
}
