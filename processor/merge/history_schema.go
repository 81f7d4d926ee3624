package merge

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/google/uuid"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// hSchema is what one apply knows of the history table's shape.
type hSchema struct {
	schema  *deltalog.StructType
	meta    deltalog.Metadata
	nsrc    int   // source fields, before the metadata columns
	keyIdx  []int // the key columns' indexes into the source fields
	tracked []bool
	dv      bool // old rows leave through deletion vectors
	// cols caches layoutCols.
	cols map[*codecs.Layout][]int
	// keyVals and keyBuf are rowKey's scratch.
	keyVals []any
	keyBuf  []byte
}

// schemaFor returns the history table's schema for the records: the
// current one with the source columns it lacks appended, or a new one from
// the first record with a row layout (nil when there is none yet), and the
// protocol and metadata actions to commit when it changed. A column whose
// type changed stops the table.
func (h *History) schemaFor(recs []Record) (*hSchema, []deltalog.Action, error) {
	var cur *deltalog.StructType
	var meta deltalog.Metadata
	var proto deltalog.Protocol
	if h.snap != nil {
		cur, meta, proto = h.snap.Schema(), h.snap.Metadata(), h.snap.Protocol()
	}
	changed := false
	// A layout is checked once: its columns are in the schema after that
	// (the first record of it names a column that stops the table).
	seen := map[*codecs.Layout]bool{}
	for i := range recs {
		c := &recs[i].Change
		if c.Layout == nil || seen[c.Layout] {
			continue
		}
		seen[c.Layout] = true
		if cur == nil {
			m, err := h.newMetadata(c)
			if err != nil {
				return nil, nil, err
			}
			meta, changed = m, true
			if cur, err = deltalog.ParseSchema(meta.SchemaString); err != nil {
				return nil, nil, err
			}
			continue
		}
		for _, col := range c.Layout.Columns {
			j := slices.IndexFunc(cur.Fields, func(f deltalog.StructField) bool {
				return !cdctable.IsHistoryMetaColumn(f.Name) && sourceName(f) == col.Name
			})
			if j >= 0 {
				if got, want := cur.Fields[j].Type, deltaType(col.Type); got.String() != want.String() {
					return nil, nil, &SchemaError{Table: h.opts.TableName, Reason: fmt.Sprintf("column %s changed type from %s to %s", col.Name, got, want),
						Remedy: "a history table keeps one type per column: move it aside (a new history_path) to start a new one; the offsets of this batch are not committed", Record: &recs[i]}
				}
				continue
			}
			names := tableNames([]codecs.Column{col}, meta.Configuration[cdctable.PropColumnNames] == string(ColumnNamesPortable))
			if deltalog.NeedsColumnMapping(names[0]) && meta.Configuration[deltalog.PropColumnMappingMode] != "name" {
				return nil, nil, &SchemaError{Table: h.opts.TableName, Reason: fmt.Sprintf("new column %q needs column mapping, which the history table lacks", col.Name),
					Remedy: "set column_names: portable, or move the history table aside (a new history_path); the offsets of this batch are not committed", Record: &recs[i]}
			}
			next := &deltalog.StructType{Fields: slices.Clone(cur.Fields)}
			at := len(next.Fields) - cdctable.HistoryMetaCount
			next.Fields = slices.Insert(next.Fields, at, sourceField(col, names[0], true))
			if meta.Configuration[deltalog.PropColumnMappingMode] == "name" {
				var maxID int64
				next, maxID = deltalog.AssignColumnMapping(next, deltalog.MaxColumnID(meta.Configuration))
				meta.Configuration = cloneConf(meta.Configuration)
				meta.Configuration[deltalog.PropColumnMappingMaxID] = strconv.FormatInt(maxID, 10)
			}
			ss, err := next.SchemaString()
			if err != nil {
				return nil, nil, err
			}
			meta.SchemaString = ss
			cur, changed = next, true
		}
	}
	if cur == nil {
		return nil, nil, nil
	}
	ts := &hSchema{schema: cur, meta: meta, nsrc: len(cur.Fields) - cdctable.HistoryMetaCount}
	var keys []string
	if err := json.Unmarshal([]byte(meta.Configuration[cdctable.PropKeyColumns]), &keys); err != nil || len(keys) == 0 {
		return nil, nil, &SchemaError{Table: h.opts.TableName, Reason: "the history table names no key columns (" + cdctable.PropKeyColumns + ")", Err: err}
	}
	for _, k := range keys {
		j := slices.IndexFunc(cur.Fields[:ts.nsrc], func(f deltalog.StructField) bool { return f.Name == k })
		if j < 0 {
			return nil, nil, &SchemaError{Table: h.opts.TableName, Reason: "key column " + k + " is not in the history table's schema"}
		}
		ts.keyIdx = append(ts.keyIdx, j)
	}
	ts.tracked = make([]bool, ts.nsrc)
	for i, f := range cur.Fields[:ts.nsrc] {
		name := sourceName(f)
		switch {
		case len(h.opts.TrackHistory) > 0:
			ts.tracked[i] = slices.Contains(h.opts.TrackHistory, name) || slices.Contains(ts.keyIdx, i)
		default:
			ts.tracked[i] = !slices.Contains(h.opts.TrackHistoryExcept, name)
		}
	}
	if changed {
		h.warnUntracked(cur.Fields[:ts.nsrc])
	}
	if !changed {
		ts.dv = proto.HasReaderFeature(deltalog.FeatureDeletionVectors) && proto.HasWriterFeature(deltalog.FeatureDeletionVectors)
		return ts, nil, nil
	}
	next := deltalog.MinimalFeaturesProtocol(cur, meta.Configuration)
	if h.snap != nil {
		next = deltalog.UpgradeProtocol(proto, next)
	}
	ts.dv = next.HasReaderFeature(deltalog.FeatureDeletionVectors) && next.HasWriterFeature(deltalog.FeatureDeletionVectors)
	m := meta
	return ts, []deltalog.Action{{Protocol: &next}, {Metadata: &m}}, nil
}

// warnUntracked logs the track_history or track_history_except names that
// are no source column of the table (yet): they track nothing.
func (h *History) warnUntracked(fields []deltalog.StructField) {
	for _, name := range slices.Concat(h.opts.TrackHistory, h.opts.TrackHistoryExcept) {
		if !slices.ContainsFunc(fields, func(f deltalog.StructField) bool { return sourceName(f) == name }) {
			h.opts.Logger.Warn("a column of track_history or track_history_except is not in the source table; it has no effect until it appears",
				"table", h.opts.TableName, "column", name)
		}
	}
}

func cloneConf(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// newMetadata is a new history table's metadata, from its first change.
func (h *History) newMetadata(c *codecs.Change) (deltalog.Metadata, error) {
	names := tableNames(c.Layout.Columns, h.opts.ColumnNames == ColumnNamesPortable)
	st := &deltalog.StructType{}
	mapping := false
	var keyNames []string
	for i, col := range c.Layout.Columns {
		key := c.KeyLayout != nil && c.KeyLayout.Index(col.Name) >= 0
		if key {
			keyNames = append(keyNames, names[i])
		}
		st.Fields = append(st.Fields, sourceField(col, names[i], !key || col.Nullable))
		mapping = mapping || deltalog.NeedsColumnMapping(names[i])
	}
	if len(keyNames) == 0 {
		return deltalog.Metadata{}, &SchemaError{Table: h.opts.TableName, Reason: "the change carries no key columns in its row",
			Remedy: "a history table needs the source's primary key (or key_columns)"}
	}
	st.Fields = append(st.Fields, cdctable.HistoryMetaFields()...)
	keys, err := json.Marshal(keyNames)
	if err != nil {
		return deltalog.Metadata{}, err
	}
	conf := map[string]string{
		cdctable.PropKeyColumns:  string(keys),
		cdctable.PropSource:      c.Table.String(),
		cdctable.PropColumnNames: string(h.opts.ColumnNames),
		cdctable.PropShape:       cdctable.ShapeHistory,
	}
	if h.opts.DeletionVectors == nil || *h.opts.DeletionVectors {
		conf[deltalog.PropEnableDeletionVectors] = "true"
	}
	if mapping {
		var maxID int64
		st, maxID = deltalog.AssignColumnMapping(st, 0)
		conf[deltalog.PropColumnMappingMode] = "name"
		conf[deltalog.PropColumnMappingMaxID] = strconv.FormatInt(maxID, 10)
	}
	if err := st.Validate(); err != nil {
		return deltalog.Metadata{}, &SchemaError{Table: h.opts.TableName, Reason: "the source schema does not make a valid Delta schema", Err: err}
	}
	ss, err := st.SchemaString()
	if err != nil {
		return deltalog.Metadata{}, err
	}
	created := h.opts.Now().UnixMilli()
	return deltalog.Metadata{ID: uuid.NewString(), CreatedTime: &created, Name: h.opts.TableName,
		Description: fmt.Sprintf("Every version of every row of %s (SCD type 2, ADR 0046), kept by cdc2delta; "+
			"__END_AT IS NULL is the current version", c.Table),
		Format: deltalog.Format{Provider: "parquet", Options: map[string]string{}}, SchemaString: ss,
		PartitionColumns: []string{}, Configuration: conf}, nil
}
