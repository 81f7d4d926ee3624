package cdcmodel

import (
	"fmt"
	"slices"

	"github.com/cdc2delta/cdc2delta/codecs"
)

// Columns of a history table (ADR 0046) besides the source columns.
const (
	ColStartAt       = "__START_AT"
	ColEndAt         = "__END_AT"
	ColStartPosition = "_cdc_start_position"
	ColEndPosition   = "_cdc_end_position"
)

// History is the reference model of a history table (SCD type 2, ADR
// 0046). It keeps every distinct event it committed and folds them, per
// key, in position order: the definition of the history, independent of the
// order events arrived in. A change that leaves every tracked column equal
// updates the open version in place; any other opens a new one; a delete or
// truncate closes the open version; an unavailable column takes the open
// version's value (NULL without one).
//
// The engine places each event among stored versions instead; the two agree
// whenever a late event does not land before a change already folded into
// its version, and no event arrives after a truncate it precedes (ADR 0046
// says what the engine does then). It is not safe for concurrent use.
type History struct {
	tracked   func(column string) bool
	keys      []string
	columns   []string
	events    map[string]map[codecs.Position]codecs.Change
	truncates map[codecs.Position]codecs.Change
	committed map[TopicPartition]int64
	pending   []Record
}

// NewHistory returns an empty history model; tracked says whether a
// column's change opens a new version (nil: every column).
func NewHistory(tracked func(column string) bool) *History {
	if tracked == nil {
		tracked = func(string) bool { return true }
	}
	return &History{tracked: tracked, events: map[string]map[codecs.Position]codecs.Change{},
		truncates: map[codecs.Position]codecs.Change{}, committed: map[TopicPartition]int64{}}
}

// Feed queues a record, in arrival order; one at or below its partition's
// committed offset is ignored.
func (h *History) Feed(r Record) {
	if off, ok := h.committed[r.TopicPartition]; ok && r.Offset <= off {
		return
	}
	h.pending = append(h.pending, r)
}

// Commit takes the queued records at or below upTo's offsets. ok is false
// when upTo advances no partition or no table exists yet.
func (h *History) Commit(upTo map[TopicPartition]int64) (ok bool) {
	var keep []Record
	for _, r := range h.pending {
		off, in := upTo[r.TopicPartition]
		if !in || r.Offset > off {
			keep = append(keep, r)
			continue
		}
		ch := r.Change
		if ch.Op == codecs.OpTruncate {
			h.truncates[ch.Pos] = ch
			continue
		}
		if ch.Layout == nil {
			continue
		}
		if h.keys == nil {
			h.keys = ch.KeyLayout.Names()
		}
		for _, c := range ch.Layout.Columns {
			if !slices.Contains(h.columns, c.Name) {
				h.columns = append(h.columns, c.Name)
			}
		}
		k := renderKey(keyValues(&ch, h.keys))
		if h.events[k] == nil {
			h.events[k] = map[codecs.Position]codecs.Change{}
		}
		if _, dup := h.events[k][ch.Pos]; !dup {
			h.events[k][ch.Pos] = ch
		}
	}
	h.pending = keep
	for tp, off := range upTo {
		if cur, in := h.committed[tp]; !in || off > cur {
			ok = true
			h.committed[tp] = off
		}
	}
	return ok && h.keys != nil
}

// Columns returns the source columns, in order of appearance.
func (h *History) Columns() []string { return slices.Clone(h.columns) }

// KeyColumns returns the key columns.
func (h *History) KeyColumns() []string { return slices.Clone(h.keys) }

// Rows returns every version of every key, by key and start position
// (RowKey of KeyColumns and ColStartPosition).
func (h *History) Rows() map[string]Row {
	out := map[string]Row{}
	for _, evs := range h.events {
		all := slices.Collect(mapValues(evs))
		for _, t := range h.truncates {
			all = append(all, t)
		}
		slices.SortFunc(all, func(a, b codecs.Change) int { return a.Pos.Compare(b.Pos) })
		var open Row
		emit := func() {
			out[RowKey(open, append(slices.Clone(h.keys), ColStartPosition))] = open
		}
		for _, ch := range all {
			at := any(nil)
			if ch.CommitMillis > 0 {
				at = ch.CommitMillis * 1000
			}
			switch ch.Op {
			case codecs.OpDelete, codecs.OpTruncate:
				if open != nil {
					open[ColEndAt], open[ColEndPosition] = at, ch.Pos.Hex()
					emit()
					open = nil
				}
				continue
			}
			img := Row{}
			for i, c := range ch.Layout.Columns {
				switch {
				case ch.IsUnavailable(i) && open != nil:
					img[c.Name] = open[c.Name]
				case ch.IsUnavailable(i):
				default:
					img[c.Name] = ch.Row[i]
				}
			}
			if open != nil && h.sameTracked(open, img) {
				for _, c := range h.columns {
					open[c] = img[c]
				}
				open[ColPosition], open[ColCommitTime] = ch.Pos.Hex(), at
				continue
			}
			if open != nil {
				open[ColEndAt], open[ColEndPosition] = at, ch.Pos.Hex()
				emit()
			}
			open = img
			open[ColStartAt], open[ColStartPosition], open[ColPosition], open[ColCommitTime] = at, ch.Pos.Hex(), ch.Pos.Hex(), at
		}
		if open != nil {
			emit()
		}
	}
	return out
}

func (h *History) sameTracked(a, b Row) bool {
	for _, c := range h.columns {
		if h.tracked(c) || slices.Contains(h.keys, c) {
			if fmt.Sprintf("%#v", a[c]) != fmt.Sprintf("%#v", b[c]) {
				return false
			}
		}
	}
	return true
}

func mapValues[K comparable, V any](m map[K]V) func(func(V) bool) {
	return func(yield func(V) bool) {
		for _, v := range m {
			if !yield(v) {
				return
			}
		}
	}
}
