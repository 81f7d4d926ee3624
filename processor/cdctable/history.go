package cdctable

import "github.com/cdc2delta/cdc2delta/deltalog"

// A history table's metadata columns (ADR 0046), after the source columns,
// in this order.
const (
	// HistStartAt and HistEndAt are the UTC source commit times of the events
	// that opened and closed a version; HistEndAt is NULL while it is open.
	HistStartAt = "__START_AT"
	HistEndAt   = "__END_AT"
	// HistStartPosition and HistEndPosition are those events' positions
	// (codecs.Position.Hex): they order a key's versions exactly.
	HistStartPosition = "_cdc_start_position"
	HistEndPosition   = "_cdc_end_position"
	// ColPosition and ColCommitTime name the last event folded into the
	// version (an untracked change updates a version in place).
)

// HistoryMetaCount is how many metadata columns follow a history table's
// source columns.
const HistoryMetaCount = 6

// PropShape records what kind of table cdc2delta keeps at a path; a history
// table has ShapeHistory, a current-state table none.
const (
	PropShape    = "cdc2delta.shape"
	ShapeHistory = "history"
	// PropTrackHistory records the columns whose change opens a new version,
	// as a JSON list of source names; absent: every source column.
	PropTrackHistory = "cdc2delta.trackHistory"
)

// HistoryMetaFields returns a history table's metadata columns.
func HistoryMetaFields() []deltalog.StructField {
	return []deltalog.StructField{
		metaField(HistStartAt, deltalog.TypeTimestampNTZ, true, "cdc2delta: UTC source commit time of the change that opened this version"),
		metaField(HistEndAt, deltalog.TypeTimestampNTZ, true, "cdc2delta: UTC source commit time of the change that closed this version; NULL while it is current"),
		metaField(HistStartPosition, deltalog.TypeString, false, "cdc2delta: source position of the change that opened this version (hex that orders as text); breaks ties of __START_AT"),
		metaField(HistEndPosition, deltalog.TypeString, true, "cdc2delta: source position of the change that closed this version; NULL while it is current"),
		metaField(ColPosition, deltalog.TypeString, false, "cdc2delta: source position of the last change folded into this version"),
		metaField(ColCommitTime, deltalog.TypeTimestampNTZ, true, "cdc2delta: UTC source commit time of the last change folded into this version"),
	}
}

// IsHistoryMetaColumn reports whether name is one of a history table's
// metadata columns.
func IsHistoryMetaColumn(name string) bool {
	switch name {
	case HistStartAt, HistEndAt, HistStartPosition, HistEndPosition, ColPosition, ColCommitTime:
		return true
	}
	return false
}
