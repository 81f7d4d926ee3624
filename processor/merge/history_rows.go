package merge

import (
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
	// times: __START_AT, __END_AT and _cdc_commit_time (µs; null marked).
	times     [3][]int64
	timesNull [3][]bool
	// spans: _cdc_start_position, _cdc_end_position and _cdc_position, as
	// spans of text (end position null: to < 0).
	spans [3][]hSpan
	text  []byte
	// last is the last position rendered and its span: a version's last
	// position is often its start, a closed version's end its successor's
	// start.
	last     codecs.Position
	lastSpan hSpan
}

// hSpan is a string's bytes in hRows.text.
type hSpan struct{ from, to int32 }

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
	r := &hRows{src: make([][]any, nsrc), lastSpan: hSpan{-1, -1}}
	vals := make([]any, nsrc*n)
	for i := range r.src {
		r.src[i] = vals[i*n : i*n : (i+1)*n]
	}
	for i := range r.times {
		r.times[i] = make([]int64, 0, n)
		r.spans[i] = make([]hSpan, 0, n)
	}
	r.text = make([]byte, 0, 2*n*codecs.PositionHexLen)
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
	r.time(0, v.startAt)
	r.time(1, v.endAt)
	r.time(2, v.lastAt)
	r.spans[0] = append(r.spans[0], r.pos(v.start))
	end := hSpan{-1, -1}
	if v.end != nil {
		end = r.pos(*v.end)
	}
	r.spans[1] = append(r.spans[1], end)
	r.spans[2] = append(r.spans[2], r.pos(v.last))
	r.n++
}

// addStored appends a row as datafile.Read returned it (a row kept when
// its file is rewritten).
func (r *hRows) addStored(row []any, nsrc int) {
	for i := range nsrc {
		r.src[i] = append(r.src[i], row[i])
	}
	m := row[nsrc:]
	r.time(0, micros(m[hStartAt]))
	r.time(1, micros(m[hEndAt]))
	r.time(2, micros(m[hLastAt]))
	for i, c := range []int{hStartPos, hEndPos, hLastPos} {
		s, ok := m[c].(string)
		if !ok {
			r.spans[i] = append(r.spans[i], hSpan{-1, -1})
			continue
		}
		from := int32(len(r.text))
		r.text = append(r.text, s...)
		r.spans[i] = append(r.spans[i], hSpan{from, int32(len(r.text))})
	}
	r.n++
}

// time appends a commit time: µs as int64, or nil.
func (r *hRows) time(c int, t any) {
	x, ok := t.(int64)
	if !ok {
		if r.timesNull[c] == nil {
			r.timesNull[c] = make([]bool, r.n, cap(r.times[c]))
		}
		r.timesNull[c] = append(r.timesNull[c], true)
		r.times[c] = append(r.times[c], 0)
		return
	}
	if r.timesNull[c] != nil {
		r.timesNull[c] = append(r.timesNull[c], false)
	}
	r.times[c] = append(r.times[c], x)
}

// pos renders p into text, unless it is the last one rendered.
func (r *hRows) pos(p codecs.Position) hSpan {
	if r.lastSpan.from >= 0 && p == r.last {
		return r.lastSpan
	}
	from := int32(len(r.text))
	r.text = p.AppendHex(r.text)
	r.last, r.lastSpan = p, hSpan{from, int32(len(r.text))}
	return r.lastSpan
}

// columns are the rows as the table's columns (nsrc source fields, then
// the metadata columns), source columns typed where their type allows.
func (r *hRows) columns(ts *hSchema) []datafile.Column {
	cols := make([]datafile.Column, len(ts.schema.Fields))
	for i := range r.src {
		cols[i].Values = r.src[i]
		typeColumn(&cols[i], ts.schema.Fields[i].Type)
	}
	m := cols[len(r.src):]
	for i, c := range []int{hStartAt, hEndAt, hLastAt} {
		m[c] = datafile.Column{Ints: r.times[i], Null: r.timesNull[i]}
	}
	text := string(r.text)
	strs := make([]string, 3*r.n)
	for i, c := range []int{hStartPos, hEndPos, hLastPos} {
		col := datafile.Column{Strs: strs[i*r.n : (i+1)*r.n : (i+1)*r.n]}
		for k, s := range r.spans[i] {
			if s.to < 0 {
				if col.Null == nil {
					col.Null = make([]bool, r.n)
				}
				col.Null[k] = true
				continue
			}
			col.Strs[k] = text[s.from:s.to]
		}
		m[c] = col
	}
	return cols
}
