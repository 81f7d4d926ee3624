package cdcmodel

// Manual edits (cdc2delta update and delete, ADR 0028) as the model sees
// them: applied to the rows as they stand between two commits, with the
// source staying the truth afterwards.

// DeleteWhere models a manual DELETE: the rows for which match is true
// leave, and each key is remembered at its stored position, as a source
// delete would remember it, so that an event at or below that position
// cannot bring the row back. It returns the version's change data feed.
func (m *Model) DeleteWhere(match func(Row) bool) Commit {
	var c Commit
	for k, row := range m.rows {
		if !match(m.change("", row).Row) {
			continue
		}
		c.Changes = append(c.Changes, m.change(Delete, row))
		delete(m.rows, k)
		if p := position(row); p.Compare(m.deletes[k]) > 0 {
			m.deletes[k] = p
		}
	}
	return c
}

// UpdateWhere models a manual UPDATE: set changes the source columns of the
// rows for which match is true. Their metadata columns stay, so the key's
// next newer source change overwrites the row, and a later unchanged-LOB
// placeholder keeps the value set here.
func (m *Model) UpdateWhere(match func(Row) bool, set func(Row)) Commit {
	var c Commit
	for k, row := range m.rows {
		if !match(m.change("", row).Row) {
			continue
		}
		next := Row{}
		for col, v := range row {
			next[col] = v
		}
		set(next)
		for _, col := range []string{ColPosition, ColOp, ColCommitTime, ColDeleted} {
			if v, ok := row[col]; ok {
				next[col] = v
			} else {
				delete(next, col)
			}
		}
		c.Changes = append(c.Changes, m.change(UpdatePreimage, row), m.change(UpdatePostimage, next))
		m.rows[k] = next
	}
	return c
}
