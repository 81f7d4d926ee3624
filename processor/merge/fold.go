package merge

import (
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/cdc2delta/cdc2delta/codecs"
)

// Chain folding (ADR 0025): a key's events of one batch are applied in
// source order, each above the one before and above the stored row (or the
// key's tombstone), as if one at a time. Only the outcome reaches the table,
// but a column an event did not carry (Debezium's unavailable-value
// placeholder) takes its value from the latest earlier image of the key:
// the event before it in the batch, else the stored row. A delete ends the
// chain of images: after it, and when there is no image at all, the column
// is NULL and reported.

// folded is a key's chain folded into the image the table gets.
type folded struct {
	// last is the last event applied: it gives the row its position and op.
	last *Record
	// row is the final image (table fields), nil after a hard delete.
	row []any
	// fromStored are the fields of row whose value is the stored row's.
	fromStored []int
	// origin are the fields the chain's first image took from the stored
	// row, and originRec its event: when the stored row turns out to be a
	// soft-deleted one, which is no earlier image, they are unresolved.
	origin    []int
	originRec *Record
}

// unresolvedColumns are columns an applied event did not carry and no
// earlier image could give; they are stored as NULL.
type unresolvedColumns struct {
	rec    *Record
	fields []int
}

// fold applies the events of a chain that stale does not reject. stored says
// whether the key has a stored row to start from. Columns nothing could
// fill are added to p.unresolved.
//
// Only the images that reach the outcome are built: the last event's, and
// going back, each image a later one takes unavailable columns from. The
// others are walked for what they decide (position, op, the columns they
// owe the stored row or miss) without building their row.
func (s *Sink) fold(p *mergePlan, evs []*Record, stale func(codecs.Position) bool, stored bool) (folded, error) {
	soft := s.opts.DeleteMode == DeleteSoft
	hardDelete := func(c *codecs.Change) bool { return c.Op == codecs.OpDelete && !soft }

	// The events applied, in order: newer than the stored row and than the
	// event applied before.
	var appliedBuf [16]*Record
	applied := appliedBuf[:0]
	for _, rec := range evs {
		c := &rec.Change
		if stale(c.Pos) || len(applied) > 0 && c.Pos.Compare(applied[len(applied)-1].Change.Pos) <= 0 {
			continue
		}
		applied = append(applied, rec)
	}
	// need[k]: applied[k]'s image reaches the outcome.
	var needBuf [16]bool
	var need []bool
	if len(applied) > len(needBuf) {
		need = make([]bool, len(applied))
	} else {
		need = needBuf[:len(applied)]
	}
	for k := len(applied) - 1; k >= 0; k-- {
		c := &applied[k].Change
		switch {
		case hardDelete(c):
			// No image.
		case k == len(applied)-1:
			need[k] = true
		default:
			next := &applied[k+1].Change
			need[k] = need[k+1] && c.Op != codecs.OpDelete && !hardDelete(next) && hasUnavailable(p.st, next)
		}
	}

	var f folded
	var prev []any       // the latest earlier image in the batch, when built
	var hasPrev bool     // there is one
	var prevStored []int // its fields taken from the stored row
	for k, rec := range applied {
		c := &rec.Change
		f.last = rec
		if hardDelete(c) {
			f.row, f.fromStored, prev, hasPrev, prevStored, stored = nil, nil, nil, false, nil, false
			continue
		}
		var row []any
		var unavailable []int
		var err error
		if need[k] {
			row, unavailable, err = s.imageRow(p.st, c)
		} else {
			unavailable, err = s.imageUnavailable(p.st, c)
		}
		if err != nil {
			return f, err
		}
		var owed, missing []int
		for _, i := range unavailable {
			switch {
			case hasPrev:
				if row != nil {
					row[i] = prev[i]
				}
				if slices.Contains(prevStored, i) {
					owed = append(owed, i)
				}
			case stored:
				owed = append(owed, i)
			default:
				missing = append(missing, i)
			}
		}
		if stored {
			f.origin, f.originRec = owed, rec
		}
		if len(missing) > 0 {
			p.unresolved = append(p.unresolved, unresolvedColumns{rec: rec, fields: missing})
		}
		// Later images reach the stored row through this one, and a
		// (soft) deleted image is no earlier image.
		f.row, f.fromStored, stored = row, owed, false
		prev, hasPrev, prevStored = row, true, owed
		if c.Op == codecs.OpDelete {
			prev, hasPrev, prevStored = nil, false, nil
		}
	}
	return f, nil
}

// unavailableFields yields the table fields a change's row image did not
// carry (Debezium's unavailable-value placeholder).
func unavailableFields(st *tableState, c *codecs.Change) iter.Seq[int] {
	return func(yield func(int) bool) {
		if len(c.Unavailable) == 0 || c.Row == nil || c.Layout == nil {
			return
		}
		for i, j := range st.mappers[c.Layout].src {
			if j >= 0 && c.IsUnavailable(j) && !yield(i) {
				return
			}
		}
	}
}

// hasUnavailable reports whether a change leaves a table field unavailable.
func hasUnavailable(st *tableState, c *codecs.Change) bool {
	for range unavailableFields(st, c) {
		return true
	}
	return false
}

// imageUnavailable is imageRow without the row: its error and the fields
// the change did not carry.
func (s *Sink) imageUnavailable(st *tableState, c *codecs.Change) ([]int, error) {
	if c.Row == nil || c.Layout == nil {
		return nil, fmt.Errorf("table %s: %s event without a row image: %w", s.opts.TableName, c.Op, codecs.ErrBadEnvelope)
	}
	return slices.Collect(unavailableFields(st, c)), nil
}

// imageRow maps a change's row image onto the table's fields, with the
// metadata columns, and returns the fields the change did not carry.
func (s *Sink) imageRow(st *tableState, c *codecs.Change) ([]any, []int, error) {
	if c.Row == nil || c.Layout == nil {
		return nil, nil, fmt.Errorf("table %s: %s event without a row image: %w", s.opts.TableName, c.Op, codecs.ErrBadEnvelope)
	}
	m := st.mappers[c.Layout]
	row := make([]any, len(st.Schema.Fields))
	for i, j := range m.src {
		if j >= 0 {
			row[i] = c.Row[j]
		}
	}
	unavailable := slices.Collect(unavailableFields(st, c))
	for _, i := range unavailable {
		row[i] = nil // the placeholder is no value
	}
	row[st.PosField] = c.Pos.Hex()
	row[st.OpField] = opValue(c.Op)
	row[st.TimeField] = c.CommitMillis * 1000
	if st.DeletedField >= 0 {
		row[st.DeletedField] = c.Op == codecs.OpDelete
	}
	return row, unavailable, nil
}

// logUnresolved reports, once the batch is committed, every event whose
// unavailable columns were stored as NULL.
func (s *Sink) logUnresolved(st *tableState, us []unresolvedColumns) {
	for _, u := range us {
		c := &u.rec.Change
		names := make([]string, len(u.fields))
		for i, f := range u.fields {
			names[i] = st.Schema.Fields[f].Name
		}
		key := make([]string, len(c.Key))
		for i, v := range c.Key {
			key[i] = fmt.Sprintf("%s=%v", c.KeyLayout.Columns[i].Name, v)
		}
		s.log.Warn("unavailable columns stored as NULL: no earlier image of the row in the batch or the table",
			"key", strings.Join(key, ","), "topic", u.rec.Topic, "partition", u.rec.Partition, "offset", u.rec.Offset,
			"position", c.Pos.String(), "columns", names)
	}
}
