package processor

import "github.com/cdc2delta/cdc2delta/processor/merge"

// recordArrays keeps a table's spare array of records: the array of its
// last committed batch, while more records wait, for the next batch's
// copy. At 10,000 records of 280 bytes a batch, making those arrays anew
// was the largest allocation of a catch-up. A table that has nothing
// pending keeps none (drop), so idle tables hold no arrays. A nil
// *recordArrays makes and drops arrays. It is guarded by Processor.mu.
type recordArrays struct {
	spare []merge.Record // empty, zeroed; nil when none
}

// get returns an empty array that holds at least n records: the spare when
// it is large enough, else a new one with a quarter to spare.
func (a *recordArrays) get(n int) []merge.Record {
	if a != nil && cap(a.spare) >= n {
		s := a.spare
		a.spare = nil
		return s
	}
	return make([]merge.Record, 0, n+n/4)
}

// put hands back an array no one uses any more; its records are zeroed,
// so it holds on to none of their changes. The larger of it and the spare
// is kept. The caller must not use recs, nor any slice of its array,
// afterwards.
func (a *recordArrays) put(recs []merge.Record) {
	if a == nil || cap(recs) <= cap(a.spare) {
		return
	}
	clear(recs[:cap(recs)])
	a.spare = recs[:0]
}

// drop forgets the spare.
func (a *recordArrays) drop() {
	if a != nil {
		a.spare = nil
	}
}
