package catalog

import (
	"github.com/cdc2delta/cdc2delta/deltalog"
)

// Roles of the tables cdc2delta registers (Entry property RoleProperty).
const (
	RoleTable     = "table"      // a current-state table
	RoleChangeLog = "change-log" // a table's change log (ADR 0031)
	RoleControl   = "control"    // the control table (ADR 0029)
	RoleHistory   = "history"    // a table's history table (ADR 0046)
	// RoleProperty records the role in the entry.
	RoleProperty = "cdc2delta.role"
)

// Source is one table to register: the name it gets, where engines find
// it, and what it is.
type Source struct {
	Name Name
	// Location is the table's root as engines address it.
	Location string
	// Role is RoleTable, RoleChangeLog, RoleHistory or RoleControl.
	Role string
}

// copiedProperties are the table properties an entry copies from the log.
var copiedProperties = []string{"cdc2delta.keyColumns", "cdc2delta.source"}

// EntryOf is the entry of src as the snapshot's metadata gives it.
func EntryOf(src Source, snap *deltalog.Snapshot) Entry {
	md := snap.Metadata()
	e := Entry{
		Name:             src.Name,
		Location:         src.Location,
		Schema:           snap.Schema(),
		PartitionColumns: md.PartitionColumns,
		Description:      md.Description,
		Properties:       map[string]string{},
		Format:           FormatDelta,
	}
	if src.Role != "" {
		e.Properties[RoleProperty] = src.Role
	}
	for _, k := range copiedProperties {
		if v, ok := md.Configuration[k]; ok {
			e.Properties[k] = v
		}
	}
	return e
}
