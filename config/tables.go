package config

import "strings"

// apply returns defaults patched with the fields the override sets.
func (o TableOverride) apply(d TableSettings) TableSettings {
	s := d
	if o.KeyColumns != nil {
		s.KeyColumns = o.KeyColumns
	}
	if o.TrackHistory != nil || o.TrackHistoryExcept != nil {
		// The two are one choice: setting either replaces both.
		s.TrackHistory, s.TrackHistoryExcept = o.TrackHistory, o.TrackHistoryExcept
	}
	if o.History != nil {
		s.History = *o.History
	}
	if o.PartitionBy != nil {
		s.PartitionBy = o.PartitionBy
	}
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&s.NullKey, o.NullKey)
	set(&s.BadInput, o.BadInput)
	set(&s.DeleteMode, o.DeleteMode)
	set(&s.MergeMode, o.MergeMode)
	set(&s.ColumnNames, o.ColumnNames)
	set(&s.HistoryPath, o.HistoryPath)
	set(&s.Catalog, o.Catalog)
	if o.DeletionVectors != nil {
		s.DeletionVectors = *o.DeletionVectors
	}
	if o.TombstoneRetention != nil {
		s.TombstoneRetention = *o.TombstoneRetention
	}
	if o.ChangeLog != nil {
		s.ChangeLog = *o.ChangeLog
	}
	if o.ChangeDataFeed != nil {
		s.ChangeDataFeed = *o.ChangeDataFeed
	}
	return s
}

// Source identifies a source table: its topic and the names Debezium puts in it.
type Source struct {
	Topic, Database, Schema, Table string
}

// Settings returns the settings of one source table: the defaults patched by every
// override that matches it, in file order (a later override wins). Names match
// case-insensitively, as SQL Server's default collation does.
func (t Tables) Settings(src Source) TableSettings {
	s := t.Defaults
	for _, o := range t.Overrides {
		if o.matches(src) {
			s = o.apply(s)
		}
	}
	return s
}

func (o TableOverride) matches(src Source) bool {
	if o.Topic != "" {
		return o.Topic == src.Topic
	}
	short := src.Schema + "." + src.Table
	long := src.Database + "." + short
	return strings.EqualFold(o.Name, short) || strings.EqualFold(o.Name, long)
}
