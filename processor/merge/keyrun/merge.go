package keyrun

import (
	"bytes"
	"fmt"
)

// Merged walks the union of runs in key order, newest first: where several
// runs hold a key, it yields the value of the earliest in the list only.
type Merged struct {
	its     []*Iter
	started bool
	key     []byte
	value   []byte
	err     error
}

// NewMerged returns an iterator before the first key of the union of runs.
func NewMerged(runs ...*Run) *Merged {
	m := &Merged{}
	for i, r := range runs {
		it := r.Iter()
		if it.Next() {
			m.its = append(m.its, it)
		} else if err := it.Err(); err != nil {
			m.err = fmt.Errorf("keyrun: merging run %d: %w", i, err)
		}
	}
	return m
}

// Next moves to the next key and reports whether there is one.
func (m *Merged) Next() bool {
	if m.err != nil {
		return false
	}
	if m.started {
		// Advance every run past the key yielded last.
		kept := m.its[:0]
		for _, it := range m.its {
			if bytes.Equal(it.Key(), m.key) && !it.Next() {
				if m.err = it.Err(); m.err != nil {
					return false
				}
				continue
			}
			kept = append(kept, it)
		}
		m.its = kept
	}
	if len(m.its) == 0 {
		return false
	}
	// Few runs merge at a time, so a scan is cheaper than a heap. On a tie
	// the earlier run wins: m.its keeps the runs' order.
	win := 0
	for i := 1; i < len(m.its); i++ {
		if bytes.Compare(m.its[i].Key(), m.its[win].Key()) < 0 {
			win = i
		}
	}
	m.key, m.started = append(m.key[:0], m.its[win].Key()...), true
	m.value = m.its[win].Value()
	return true
}

// Key is the current key, valid until the next call to Next.
func (m *Merged) Key() []byte { return m.key }

// Value is the current key's newest value, valid until the next call to Next.
func (m *Merged) Value() []byte { return m.value }

// Err is the error that ended the iteration, if any.
func (m *Merged) Err() error { return m.err }

// Merge writes the union of runs to w, newest first (as Merged). keep, when
// not nil, gives the value written for a key's winning value, or false to
// leave the key out, as a compaction that reaches the oldest run does with
// deletes; the value it returns is used before its next call. It does not
// close w.
func Merge(w *Writer, keep func(value []byte) ([]byte, bool), runs ...*Run) error {
	for i, r := range runs {
		if r.width != w.width {
			return fmt.Errorf("keyrun: merging run %d of width %d into a run of width %d", i, r.width, w.width)
		}
	}
	m := NewMerged(runs...)
	for m.Next() {
		v := m.Value()
		if keep != nil {
			var ok bool
			if v, ok = keep(v); !ok {
				continue
			}
		}
		if err := w.Add(m.Key(), v); err != nil {
			return err
		}
	}
	return m.Err()
}
