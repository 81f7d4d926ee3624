package merge

import (
	"fmt"
	"slices"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
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
	// dirty marks a stored version the timeline changed.
	dirty bool
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

// tail is the part of v from its last folded event on, as a new version
// from slab.
func (v *hVersion) tail(slab *hSlab) *hVersion {
	t := slab.version()
	*t = hVersion{vals: v.vals, start: v.last, startAt: v.lastAt, end: v.end, endAt: v.endAt, last: v.last, lastAt: v.lastAt}
	return t
}

// timeline is one key's versions, ordered by start position.
type timeline struct {
	vs      []*hVersion
	tracked []bool // per source field: a change opens a new version
	slab    *hSlab // allocates versions and positions (nil: new ones)
}

// apply places e among the versions by its position (ADR 0046): inside a
// version it splits or updates it, in a gap it opens a version running to
// the next one. An event at a version's start is a re-delivery.
func (t *timeline) apply(e *hEvent) {
	in := -1
	// An event after every start (the usual one) can only fall inside the
	// last version: the versions do not overlap.
	last := len(t.vs) - 1
	atEnd := last < 0 || t.vs[last].start.Compare(e.pos) < 0
	if atEnd {
		if last >= 0 && t.vs[last].contains(e.pos) {
			in = last
		}
	} else {
		for _, v := range t.vs {
			if v.start.Compare(e.pos) == 0 {
				return
			}
		}
		in = slices.IndexFunc(t.vs, func(v *hVersion) bool { return v.contains(e.pos) })
	}
	if e.op == codecs.OpDelete || e.op == codecs.OpTruncate {
		if in < 0 {
			return
		}
		v := t.vs[in]
		var tail *hVersion
		if v.last.Compare(e.pos) > 0 {
			tail = v.tail(t.slab)
		}
		v.end, v.endAt, v.dirty = t.slab.position(e.pos), e.at, true
		if tail != nil {
			t.vs = slices.Insert(t.vs, in+1, tail)
		}
		return
	}
	img := e.vals
	if slices.Contains(e.unavailable, true) {
		img = slices.Clone(e.vals)
	}
	for i, u := range e.unavailable {
		if u {
			img[i] = nil
			if in >= 0 {
				img[i] = t.vs[in].vals[i]
			}
		}
	}
	nv := t.slab.version()
	*nv = hVersion{vals: img, start: e.pos, startAt: e.at, last: e.pos, lastAt: e.at}
	if in >= 0 {
		v := t.vs[in]
		if t.sameTracked(img, v.vals) {
			if e.pos.Compare(v.last) > 0 {
				v.vals, v.last, v.lastAt, v.dirty = img, e.pos, e.at, true
			}
			return
		}
		nv.end, nv.endAt = v.end, v.endAt
		ins := []*hVersion{nv}
		if v.last.Compare(e.pos) > 0 {
			tail := v.tail(t.slab)
			nv.end, nv.endAt = &tail.start, tail.startAt
			ins = append(ins, tail)
		}
		v.end, v.endAt, v.dirty = t.slab.position(e.pos), e.at, true
		t.vs = slices.Insert(t.vs, in+1, ins...)
		return
	}
	next := -1
	if !atEnd {
		next = slices.IndexFunc(t.vs, func(v *hVersion) bool { return v.start.Compare(e.pos) > 0 })
	}
	if next < 0 {
		t.vs = append(t.vs, nv)
		return
	}
	if nx := t.vs[next]; t.sameTracked(img, nx.vals) {
		nx.start, nx.startAt, nx.dirty = e.pos, e.at, true
		return
	}
	nv.end, nv.endAt = t.slab.position(t.vs[next].start), t.vs[next].startAt
	t.vs = slices.Insert(t.vs, next, nv)
}

func (t *timeline) sameTracked(a, b []any) bool {
	for i, tr := range t.tracked {
		if tr && !sameValue(a[i], b[i]) {
			return false
		}
	}
	return true
}

// sameValue says whether a and b are equal values: directly for the common
// types, else as valueKey renders them.
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case nil:
		if b == nil {
			return true
		}
	case string:
		if y, ok := b.(string); ok {
			return x == y
		}
	case int64:
		if y, ok := b.(int64); ok {
			return x == y
		}
	case int32:
		if y, ok := b.(int32); ok {
			return x == y
		}
	case bool:
		if y, ok := b.(bool); ok {
			return x == y
		}
	case decimal128.Num:
		if y, ok := b.(decimal128.Num); ok {
			return x == y
		}
	}
	return valueKey(a) == valueKey(b)
}

// valueKey renders a value so that equal values (of any integer width,
// decimals of codecs and datafile alike) render equally.
func valueKey(v any) string {
	if b, err := cdctable.AppendKey(nil, []any{v}); err == nil {
		return string(b)
	}
	return fmt.Sprintf("%T:%#v", v, v)
}
