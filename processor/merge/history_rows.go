package merge

import (
	"unsafe"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
)

// hRows are the rows a batch writes to the history table, kept column by
// column for datafile.WriteColumns: the metadata columns typed (times as
// µs, positions as text), so that no row boxes them, and every position
// rendered into one text, the same position once in a row.
type hRows struct {
	n   int
	src [][]any // per source field: a value per row
	// meta are the metadata columns, typed.
	meta [6]datafile.Column
	// text holds the positions' texts; it only grows, so the strings
	// sliced from it stay as they are.
	text []byte
	// last is the last position rendered and its text: a version's last
	// position is often its start, a closed version's end its successor's
	// start.
	last     codecs.Position
	lastText string
}

// The metadata columns, in table order after the source columns.
const (
	hStartAt = iota
	hEndAt
	hStartPos
	hEndPos
	hLastPos
	hLastAt
)

// newHRows makes room for about n rows of nsrc source fields.
func newHRows(nsrc, n int) *hRows {
	r := &hRows{src: make([][]any, nsrc)}
	vals := make([]any, nsrc*n)
	for i := range r.src {
		r.src[i] = vals[i*n : i*n : (i+1)*n]
	}
	ints := make([]int64, 3*n)
	strs := make([]string, 3*n)
	for i, c := range []int{hStartAt, hEndAt, hLastAt} {
		r.meta[c].Ints = ints[i*n : i*n : (i+1)*n]
	}
	for i, c := range []int{hStartPos, hEndPos, hLastPos} {
		r.meta[c].Strs = strs[i*n : i*n : (i+1)*n]
	}
	// An update renders three positions for its two rows (text grows when
	// a batch needs more).
	r.text = make([]byte, 0, 3*n/2*codecs.PositionHexLen)
	return r
}

// addVersion appends v as a row.
func (r *hRows) addVersion(v *hVersion) {
	for i := range r.src {
		var x any
		if i < len(v.vals) {
			x = v.vals[i]
		}
		r.src[i] = append(r.src[i], x)
	}
	r.time(hStartAt, v.startAt)
	r.time(hEndAt, v.endAt)
	r.time(hLastAt, v.lastAt)
	start := r.pos(v.start)
	r.str(hStartPos, start, true)
	if v.end != nil {
		r.str(hEndPos, r.pos(*v.end), true)
	} else {
		r.str(hEndPos, "", false)
	}
	// A version of one event ends where it started.
	last := start
	if v.last != v.start {
		last = r.pos(v.last)
	}
	r.str(hLastPos, last, true)
	r.n++
}

// addStored appends a row as datafile.Read returned it (a row kept when
// its file is rewritten).
func (r *hRows) addStored(row []any, nsrc int) {
	for i := range nsrc {
		r.src[i] = append(r.src[i], row[i])
	}
	m := row[nsrc:]
	for _, c := range []int{hStartAt, hEndAt, hLastAt} {
		r.time(c, micros(m[c]))
	}
	for _, c := range []int{hStartPos, hEndPos, hLastPos} {
		s, ok := m[c].(string)
		r.str(c, s, ok)
	}
	r.n++
}

// time appends a commit time to column c: µs as int64, or nil.
func (r *hRows) time(c int, t any) {
	col := &r.meta[c]
	x, ok := t.(int64)
	col.Ints = append(col.Ints, x)
	r.null(col, !ok)
}

// str appends s to column c, or a null.
func (r *hRows) str(c int, s string, ok bool) {
	col := &r.meta[c]
	col.Strs = append(col.Strs, s)
	r.null(col, !ok)
}

// null marks the row being appended to col null or not.
func (r *hRows) null(col *datafile.Column, null bool) {
	if col.Null == nil {
		if !null {
			return
		}
		col.Null = make([]bool, r.n, max(r.n+1, cap(col.Ints)+cap(col.Strs)))
	}
	col.Null = append(col.Null, null)
}

// pos renders p into text, unless it is the last one rendered.
func (r *hRows) pos(p codecs.Position) string {
	if r.lastText != "" && p == r.last {
		return r.lastText
	}
	from := len(r.text)
	r.text = p.AppendHex(r.text)
	// The bytes are never written again: text only grows past them.
	r.last, r.lastText = p, unsafe.String(&r.text[from], len(r.text)-from)
	return r.lastText
}

// columns are the rows as the table's columns (the source fields, then
// the metadata columns), source columns typed where their type allows.
func (r *hRows) columns(ts *hSchema) []datafile.Column {
	cols := make([]datafile.Column, 0, len(ts.schema.Fields))
	for i := range r.src {
		c := datafile.Column{Values: r.src[i]}
		typeColumn(&c, ts.schema.Fields[i].Type)
		cols = append(cols, c)
	}
	return append(cols, r.meta[:]...)
}
