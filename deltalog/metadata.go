package deltalog

import (
	"maps"
	"slices"
	"time"
)

// Equal reports whether m and o describe the same table: every field of the metaData
// action, with nil and empty maps and slices alike (a JSON round trip may turn one into
// the other) and schemaStrings compared as JSON. A commit that writes a metaData action equal to the current one changes
// nothing.
func (m Metadata) Equal(o Metadata) bool {
	return m.ID == o.ID && m.Name == o.Name && m.Description == o.Description &&
		m.Format.Provider == o.Format.Provider && maps.Equal(m.Format.Options, o.Format.Options) &&
		SameSchemaString(m.SchemaString, o.SchemaString) && slices.Equal(m.PartitionColumns, o.PartitionColumns) &&
		equalPtr(m.CreatedTime, o.CreatedTime) && maps.Equal(m.Configuration, o.Configuration)
}

func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// DeletedFileRetention is how long the files a commit removes must stay for readers of
// older versions and for concurrent writers: the table's
// delta.deletedFileRetentionDuration, or its 7-day default when the property is unset or
// malformed. Snapshots keep the tombstones younger than it, and VACUUM deletes nothing
// younger.
func (m Metadata) DeletedFileRetention() time.Duration {
	return durationProp(m.Configuration, PropDeletedFileRetention, defaultDeletedFileRetention)
}
