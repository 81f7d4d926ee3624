package merge

import (
	"fmt"
	"slices"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// hVersion is one version of a key in a history table (ADR 0046).
type hVersion struct {
	vals     []any // source columns, aligned with the table's source fields
	start    codecs.Position
	startAt  any // UTC commit time in µs (int64) or nil
	end      *codecs.Position
	endAt    any
	last     codecs.Position // the last event folded in
	lastAt   any
	fromFile string // the stored row it was read from; "" for a new one
	fromRow  uint64
}

// hEvent is one change event of a key (or a truncate), as the timeline
// takes it.
type hEvent struct {
	op  codecs.Op
	pos codecs.Position
	at  any
	// vals are the row image aligned with the table's source fields;
	// unavailable marks the columns the event did not carry.
	vals        []any
	unavailable []bool
}

func (v *hVersion) contains(p codecs.Position) bool {
	return v.start.Compare(p) < 0 && (v.end == nil || p.Compare(*v.end) < 0)
}

// tail is the part of v from its last folded event on, as a new version.
func (v *hVersion) tail() *hVersion {
	return &hVersion{vals: v.vals, start: v.last, startAt: v.lastAt, end: v.end, endAt: v.endAt, last: v.last, lastAt: v.lastAt}
}

// timeline is one key's versions, ordered by start position.
type timeline struct {
	vs      []*hVersion
	tracked []bool // per source field: a change opens a new version
}

// apply places e among the versions by its position (ADR 0046): inside a
// version it splits or updates it, in a gap it opens a version running to
// the next one. An event at a version's start is a re-delivery.
func (t *timeline) apply(e *hEvent) {
	for _, v := range t.vs {
		if v.start.Compare(e.pos) == 0 {
			return
		}
	}
	in := slices.IndexFunc(t.vs, func(v *hVersion) bool { return v.contains(e.pos) })
	if e.op == codecs.OpDelete || e.op == codecs.OpTruncate {
		if in < 0 {
			return
		}
		v := t.vs[in]
		var tail *hVersion
		if v.last.Compare(e.pos) > 0 {
			tail = v.tail()
		}
		end := e.pos
		v.end, v.endAt = &end, e.at
		if tail != nil {
			t.vs = slices.Insert(t.vs, in+1, tail)
		}
		return
	}
	img := slices.Clone(e.vals)
	for i, u := range e.unavailable {
		if u {
			img[i] = nil
			if in >= 0 {
				img[i] = t.vs[in].vals[i]
			}
		}
	}
	nv := &hVersion{vals: img, start: e.pos, startAt: e.at, last: e.pos, lastAt: e.at}
	if in >= 0 {
		v := t.vs[in]
		if t.sameTracked(img, v.vals) {
			if e.pos.Compare(v.last) > 0 {
				v.vals, v.last, v.lastAt = img, e.pos, e.at
			}
			return
		}
		nv.end, nv.endAt = v.end, v.endAt
		ins := []*hVersion{nv}
		if v.last.Compare(e.pos) > 0 {
			tail := v.tail()
			nv.end, nv.endAt = &tail.start, tail.startAt
			ins = append(ins, tail)
		}
		end := e.pos
		v.end, v.endAt = &end, e.at
		t.vs = slices.Insert(t.vs, in+1, ins...)
		return
	}
	next := slices.IndexFunc(t.vs, func(v *hVersion) bool { return v.start.Compare(e.pos) > 0 })
	if next < 0 {
		t.vs = append(t.vs, nv)
		return
	}
	if nx := t.vs[next]; t.sameTracked(img, nx.vals) {
		nx.start, nx.startAt = e.pos, e.at
		return
	}
	s := t.vs[next].start
	nv.end, nv.endAt = &s, t.vs[next].startAt
	t.vs = slices.Insert(t.vs, next, nv)
}

func (t *timeline) sameTracked(a, b []any) bool {
	for i, tr := range t.tracked {
		if tr && valueKey(a[i]) != valueKey(b[i]) {
			return false
		}
	}
	return true
}

// valueKey renders a value so that equal values (of any integer width,
// decimals of codecs and datafile alike) render equally.
func valueKey(v any) string {
	if b, err := cdctable.AppendKey(nil, []any{v}); err == nil {
		return string(b)
	}
	return fmt.Sprintf("%T:%#v", v, v)
}
