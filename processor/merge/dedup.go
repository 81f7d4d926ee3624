package merge

import (
	"slices"

	"github.com/cdc2delta/cdc2delta/codecs"
)

// compareEvents orders the events of one table: source position, then
// Kafka partition and offset (ADR 0021).
func compareEvents(a, b *Record) int {
	if c := a.Change.Pos.Compare(b.Change.Pos); c != 0 {
		return c
	}
	if a.Partition != b.Partition {
		if a.Partition < b.Partition {
			return -1
		}
		return 1
	}
	switch {
	case a.Offset < b.Offset:
		return -1
	case a.Offset > b.Offset:
		return 1
	}
	return 0
}

// chain is one key's events of a micro-batch, in source order (ADR 0025).
type chain struct {
	key    string
	events []*Record
}

// dedupResult is a micro-batch grouped into one chain per key.
type dedupResult struct {
	// truncate is the latest truncate event, nil when none; every event
	// ordered before it was dropped.
	truncate *Record
	// chains holds one chain per key, in order of the key's first
	// appearance.
	chains []chain
	// duplicates counts events at the position of the event before them in
	// their chain; superseded counts the other events that are not the last
	// of their chain, and those before a truncate.
	duplicates, superseded int64
}

// dedup groups the events of a batch by primary key, each key's in source
// order; only the last event of a key decides its position and operation.
// keys[i] is the encoded key of recs[i] (unused for truncates and
// tombstones).
func dedup(recs []Record, keys []string) dedupResult {
	var r dedupResult
	for i := range recs {
		if recs[i].Change.Op == codecs.OpTruncate && (r.truncate == nil || compareEvents(&recs[i], r.truncate) > 0) {
			r.truncate = &recs[i]
		}
	}
	// Two passes: count each key's events, then place them, so the chains
	// share one backing array.
	at := make(map[string]int, len(recs))
	chainOf := make([]int32, len(recs))
	counts := make([]int, 0, len(recs))
	r.chains = make([]chain, 0, len(recs))
	for i := range recs {
		chainOf[i] = -1
		rec := &recs[i]
		switch rec.Change.Op {
		case codecs.OpTruncate, codecs.OpTombstone:
			continue
		}
		if r.truncate != nil && compareEvents(rec, r.truncate) < 0 {
			r.superseded++
			continue
		}
		j, ok := at[keys[i]]
		if !ok {
			j = len(counts)
			at[keys[i]] = j
			counts = append(counts, 0)
			r.chains = append(r.chains, chain{key: keys[i]})
		}
		chainOf[i] = int32(j)
		counts[j]++
	}
	flat := make([]*Record, len(recs))
	off := 0
	for j, n := range counts {
		r.chains[j].events = flat[off : off : off+n]
		off += n
	}
	for i, j := range chainOf {
		if j >= 0 {
			r.chains[j].events = append(r.chains[j].events, &recs[i])
		}
	}
	for _, ch := range r.chains {
		if len(ch.events) > 1 {
			slices.SortFunc(ch.events, compareEvents)
		}
		for j := 1; j < len(ch.events); j++ {
			if ch.events[j].Change.Pos.Compare(ch.events[j-1].Change.Pos) == 0 {
				r.duplicates++
			} else {
				r.superseded++
			}
		}
	}
	return r
}

// latestTruncate returns the position of the latest truncate of recs, nil
// when there is none.
func latestTruncate(recs []Record) *codecs.Position {
	var out *codecs.Position
	for i := range recs {
		if c := &recs[i].Change; c.Op == codecs.OpTruncate && (out == nil || c.Pos.Compare(*out) > 0) {
			out = &c.Pos
		}
	}
	return out
}
