package keyrun

import (
	"bytes"
	"fmt"
)

// Merge writes the union of runs to w, newest first: where several runs
// hold a key, the value of the earliest in runs wins. drop, when not nil,
// leaves out a key whose winning value it returns true for, as a compaction
// that reaches the oldest run does with deletes. It does not close w.
func Merge(w *Writer, drop func(value []byte) bool, runs ...*Run) error {
	its := make([]*Iter, 0, len(runs))
	for i, r := range runs {
		if r.width != w.width {
			return fmt.Errorf("keyrun: merging run %d of width %d into a run of width %d", i, r.width, w.width)
		}
		it := r.Iter()
		if it.Next() {
			its = append(its, it)
		} else if err := it.Err(); err != nil {
			return fmt.Errorf("keyrun: merging run %d: %w", i, err)
		}
	}
	var key []byte
	for len(its) > 0 {
		// Few runs merge at a time (a handful), so a scan is cheaper than a
		// heap. On a tie the earlier run wins: its order is kept.
		win := 0
		for i := 1; i < len(its); i++ {
			if bytes.Compare(its[i].Key(), its[win].Key()) < 0 {
				win = i
			}
		}
		key = append(key[:0], its[win].Key()...)
		if drop == nil || !drop(its[win].Value()) {
			if err := w.Add(key, its[win].Value()); err != nil {
				return err
			}
		}
		kept := its[:0]
		for _, it := range its {
			if bytes.Equal(it.Key(), key) && !it.Next() {
				if err := it.Err(); err != nil {
					return err
				}
				continue
			}
			kept = append(kept, it)
		}
		its = kept
	}
	return nil
}
