package merge

import (
	"fmt"

	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// RenameError stops a table whose source schema dropped one column and added
// another of the same type in one change: the shape a column renamed at the
// source takes. Applied as a drop and an add, the new column would start empty
// and the old one fill with NULL from then on, so the operator says which it was.
type RenameError struct {
	Dropped, Added, Type string
}

func (e *RenameError) Error() string {
	return fmt.Sprintf("column %q was dropped and column %q added in one schema change, both %s: a source rename looks like this",
		e.Dropped, e.Added, e.Type)
}

// renameRemedy names the two ways on.
func (e *RenameError) renameRemedy() string {
	return fmt.Sprintf("if the source renamed %[1]q to %[2]q, rename the column under column mapping: "+
		"cdc2delta alter TABLE --rename-column '%[1]s=%[2]s' "+
		"(a table without column mapping needs cdc2delta alter TABLE --set delta.columnMapping.mode=name --upgrade-protocol first), "+
		"and its rows keep their values; if %[2]q is a new column and %[1]q was dropped, "+
		"accept it as such: cdc2delta alter TABLE --set '%[3]s=%[4]s' "+
		"(%[1]q then holds NULL in new rows); restart after either; the offsets of this batch are not committed",
		e.Dropped, e.Added, cdctable.PropAcceptDropAdd, cdctable.AcceptDropAdd(e.Dropped, e.Added))
}
