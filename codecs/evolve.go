package codecs

import (
	"fmt"
	"slices"
)

// Evolution is what applying a new schema to a table requires. Columns are
// matched by source name.
type Evolution struct {
	// Added are columns of the new schema the table lacks, in schema order.
	// They must be added as nullable: existing rows have no value for them.
	Added []Column
	// Dropped are non-key table columns the new schema lacks. They stay in
	// the table (dropping would need column mapping and loses history);
	// rows written from now on hold NULL there, so a non-nullable one must
	// be relaxed to nullable first (see ADR 0003).
	Dropped []Column
	// Relaxed are columns that became nullable.
	Relaxed []Column
	// Widened are columns whose type widens losslessly (short → integer,
	// decimal with more integer digits, ...); applying them needs Delta's
	// typeWidening feature, so the caller may still refuse.
	Widened []Column
}

// Unchanged reports whether the new schema needs no table change.
func (e Evolution) Unchanged() bool {
	return len(e.Added) == 0 && len(e.Dropped) == 0 && len(e.Relaxed) == 0 && len(e.Widened) == 0
}

// Evolve compares a table's current columns and primary key with a new
// schema's. Changes that cannot be applied without losing or
// reinterpreting data return a *[SchemaChangeError] (wrapping
// [ErrSchemaChange]) listing every problem: a changed or narrowed type, a
// nullable column becoming required, a changed primary key, or a removed key
// column.
func Evolve(current []Column, currentKey []string, next []Column, nextKey []string) (Evolution, error) {
	var ev Evolution
	var problems []string
	if !slices.Equal(currentKey, nextKey) {
		for _, k := range currentKey {
			if !slices.ContainsFunc(next, func(c Column) bool { return c.Name == k }) {
				problems = append(problems, fmt.Sprintf("key column %q removed", k))
			}
		}
		problems = append(problems, fmt.Sprintf("primary key changed from %q to %q", currentKey, nextKey))
	}
	byName := make(map[string]int, len(current))
	for i, c := range current {
		byName[c.Name] = i
	}
	seen := make([]bool, len(current))
	for _, n := range next {
		i, ok := byName[n.Name]
		if !ok {
			ev.Added = append(ev.Added, n)
			continue
		}
		seen[i] = true
		c := current[i]
		switch {
		// Compared as stored: a time column read back from a Delta schema
		// is a long, and is the same column.
		case c.Type.DeltaName() == n.Type.DeltaName():
		case n.Type.Widens(c.Type):
			ev.Widened = append(ev.Widened, n)
		default:
			problems = append(problems, fmt.Sprintf("column %q changes type from %s to %s", n.Name, c.Type, n.Type))
		}
		switch {
		case c.Nullable && !n.Nullable:
			problems = append(problems, fmt.Sprintf("column %q changes from nullable to required", n.Name))
		case !c.Nullable && n.Nullable:
			ev.Relaxed = append(ev.Relaxed, n)
		}
	}
	for i, c := range current {
		if seen[i] {
			continue
		}
		if slices.Contains(currentKey, c.Name) {
			if slices.Equal(currentKey, nextKey) {
				problems = append(problems, fmt.Sprintf("key column %q removed", c.Name))
			}
			continue
		}
		ev.Dropped = append(ev.Dropped, c)
	}
	if len(problems) > 0 {
		return ev, &SchemaChangeError{Problems: problems}
	}
	return ev, nil
}

// Names returns the source names of the columns, in order.
func (l *Layout) Names() []string {
	names := make([]string, len(l.Columns))
	for i, c := range l.Columns {
		names[i] = c.Name
	}
	return names
}

// SuspectedRename reports the shape a column renamed at the source takes in a
// schema change: exactly one column dropped and exactly one added, of the same
// type. Applied as it is, the new column starts empty and the old one fills
// with NULL from then on, so the caller asks the operator which it was.
func (e Evolution) SuspectedRename() (dropped, added Column, ok bool) {
	if len(e.Dropped) != 1 || len(e.Added) != 1 || e.Dropped[0].Type.DeltaName() != e.Added[0].Type.DeltaName() {
		return Column{}, Column{}, false
	}
	return e.Dropped[0], e.Added[0], true
}
