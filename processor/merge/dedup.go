package merge

import "github.com/cdc2delta/cdc2delta/codecs"

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

// keyedEvent is a record with its encoded key.
type keyedEvent struct {
	rec *Record
	key string
}

// dedupResult is a micro-batch reduced to the latest event per key.
type dedupResult struct {
	// truncate is the latest truncate event, nil when none; every event
	// ordered before it was dropped.
	truncate *Record
	// events holds one event per key, in order of the key's first
	// appearance.
	events []keyedEvent
	// duplicates counts events with the same key and position as a kept
	// one; superseded counts older events of a key (or before a truncate).
	duplicates, superseded int64
}

// dedup keeps only the latest event per primary key. keys[i] is the encoded
// key of recs[i] (unused for truncates and tombstones).
func dedup(recs []Record, keys []string) dedupResult {
	var r dedupResult
	for i := range recs {
		if recs[i].Change.Op == codecs.OpTruncate && (r.truncate == nil || compareEvents(&recs[i], r.truncate) > 0) {
			r.truncate = &recs[i]
		}
	}
	at := make(map[string]int, len(recs))
	r.events = make([]keyedEvent, 0, len(recs))
	for i := range recs {
		rec := &recs[i]
		switch rec.Change.Op {
		case codecs.OpTruncate, codecs.OpTombstone:
			continue
		}
		if r.truncate != nil && compareEvents(rec, r.truncate) < 0 {
			r.superseded++
			continue
		}
		k := keys[i]
		j, ok := at[k]
		if !ok {
			at[k] = len(r.events)
			r.events = append(r.events, keyedEvent{rec: rec, key: k})
			continue
		}
		kept := r.events[j].rec
		if kept.Change.Pos.Compare(rec.Change.Pos) == 0 {
			r.duplicates++
		} else {
			r.superseded++
		}
		if compareEvents(rec, kept) > 0 {
			r.events[j].rec = rec
		}
	}
	return r
}
