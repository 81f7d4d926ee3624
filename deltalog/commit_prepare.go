package deltalog

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// prepareCommit validates actions against the read snapshot and returns copies with
// txn.lastUpdated and remove.deletionTimestamp filled in, plus a summary for conflict
// checks. Nothing here depends on the version finally won, so retries reuse it.
func (t *Table) prepareCommit(read *Snapshot, actions []Action, now time.Time) ([]Action, *txnSummary, error) {
	invalid := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidCommit, fmt.Sprintf(format, args...))
	}
	sum := &txnSummary{
		removed: map[string]bool{},
		appIDs:  map[string]bool{},
		domains: map[string]bool{},
	}
	out := make([]Action, 0, len(actions))
	var newProto *Protocol
	var newMeta *Metadata
	adds := map[FileKey]bool{}
	removes := map[FileKey]bool{}
	onlyAdds, onlyRearrange, anyFile := true, true, false
	nowMS := now.UnixMilli()
	for i, a := range actions {
		switch a.kind() {
		case "protocol":
			if newProto != nil {
				return nil, nil, invalid("more than one protocol action")
			}
			p := *a.Protocol
			newProto = &p
			a.Protocol = &p
			sum.hasProtocol = true
			onlyAdds = false
		case "metaData":
			if newMeta != nil {
				return nil, nil, invalid("more than one metaData action")
			}
			m := *a.Metadata
			// Required fields must be written as {} / [], never null.
			if m.Configuration == nil {
				m.Configuration = map[string]string{}
			}
			if m.PartitionColumns == nil {
				m.PartitionColumns = []string{}
			}
			if m.Format.Options == nil {
				m.Format.Options = map[string]string{}
			}
			newMeta = &m
			a.Metadata = &m
			sum.hasMetadata = true
			onlyAdds = false
		case "txn":
			tx := *a.Txn
			if sum.appIDs[tx.AppID] {
				return nil, nil, invalid("two txn actions for appId %q", tx.AppID)
			}
			sum.appIDs[tx.AppID] = true
			if tx.LastUpdated == nil {
				tx.LastUpdated = &nowMS
			}
			a.Txn = &tx
		case "domainMetadata":
			if sum.domains[a.DomainMetadata.Domain] {
				return nil, nil, invalid("two actions for domain %q", a.DomainMetadata.Domain)
			}
			sum.domains[a.DomainMetadata.Domain] = true
		case "add":
			if a.Add.PartitionValues == nil {
				add := *a.Add
				add.PartitionValues = map[string]*string{} // required: {} when unpartitioned
				a.Add = &add
			}
			k := a.Add.Key()
			if a.Add.Path == "" || adds[k] {
				return nil, nil, invalid("add %d: empty or duplicate path %q", i, a.Add.Path)
			}
			adds[k] = true
			sum.added++
			anyFile = true
			if a.Add.DataChange {
				onlyRearrange = false
			}
		case "remove":
			r := *a.Remove
			k := r.Key()
			if r.Path == "" || removes[k] {
				return nil, nil, invalid("remove %d: empty or duplicate path %q", i, r.Path)
			}
			removes[k] = true
			sum.removed[k.path] = true
			sum.removedN++
			if r.DeletionTimestamp == nil {
				r.DeletionTimestamp = &nowMS
			}
			a.Remove = &r
			onlyAdds = false
			anyFile = true
			if r.DataChange {
				onlyRearrange = false
			}
		case "cdc":
			if a.CDC.PartitionValues == nil {
				c := *a.CDC
				c.PartitionValues = map[string]*string{}
				a.CDC = &c
			}
		case "commitInfo":
			return nil, nil, invalid("commitInfo is written by Commit; pass an Operation instead")
		case "checkpointMetadata", "sidecar":
			return nil, nil, invalid("%s actions only belong in v2 checkpoints", a.kind())
		default:
			return nil, nil, invalid("action %d has no field set", i)
		}
		out = append(out, a)
	}
	sum.blindAppend = onlyAdds && read != nil && sum.added > 0 && !onlyRearrange
	sum.snapshotIsol = anyFile && onlyRearrange && sum.added+sum.removedN > 0

	// Effective protocol and metadata after this commit.
	switch {
	case read == nil:
		if newProto == nil || newMeta == nil {
			return nil, nil, invalid("version 0 needs exactly one protocol and one metaData action")
		}
		sum.protocol, sum.meta = *newProto, *newMeta
	default:
		sum.protocol, sum.meta = read.protocol, read.metadata
		if newProto != nil {
			if missing := missingFeatures(read.protocol, *newProto); len(missing) > 0 {
				return nil, nil, invalid("protocol change drops features %s", strings.Join(missing, ", "))
			}
			sum.protocol = *newProto
		}
		if newMeta != nil {
			if newMeta.ID != read.metadata.ID {
				return nil, nil, invalid("metaData.id changed from %q to %q", read.metadata.ID, newMeta.ID)
			}
			sum.meta = *newMeta
		}
		if err := read.protocol.CheckWrite(nil, nil); err != nil {
			return nil, nil, err
		}
	}
	schema := read.schemaOrNil()
	if newMeta != nil || read == nil {
		var err error
		if schema, err = validateMetadata(&sum.meta); err != nil {
			return nil, nil, err
		}
	}
	if err := sum.protocol.CheckWrite(&sum.meta, schema); err != nil {
		return nil, nil, err
	}
	// Only commits that set the schema, properties or protocol must prove that the
	// protocol covers them; existing tables keep working as their writers left them.
	if newMeta != nil || newProto != nil {
		var missing []string
		reader, writer := neededFeatures(schema, sum.meta.Configuration)
		for _, f := range append(reader, writer...) {
			if !sum.protocol.HasWriterFeature(f) {
				missing = append(missing, f)
			}
		}
		if len(missing) > 0 {
			return nil, nil, invalid("protocol lacks features the schema or properties need: %s", strings.Join(missing, ", "))
		}
	}
	if err := checkPartitionValues(out, &sum.meta, schema); err != nil {
		return nil, nil, err
	}
	if isTrue(sum.meta.Configuration[PropAppendOnly]) {
		for _, a := range out {
			if a.Remove != nil && a.Remove.DataChange {
				return nil, nil, fmt.Errorf("%w: remove of %s changes data", ErrAppendOnly, a.Remove.Path)
			}
		}
	}
	return out, sum, nil
}

// schemaOrNil returns nil on a nil snapshot, so creation code can share paths with updates.
func (s *Snapshot) schemaOrNil() *StructType {
	if s == nil {
		return nil
	}
	return s.schema
}

// missingFeatures lists the writer features of have that want lacks.
func missingFeatures(have, want Protocol) []string {
	var out []string
	for _, f := range have.WriterFeatureSet() {
		if !want.HasWriterFeature(f) {
			out = append(out, f)
		}
	}
	return out
}

// validateMetadata checks a metaData action we are about to write and returns its schema.
func validateMetadata(m *Metadata) (*StructType, error) {
	if m.ID == "" {
		return nil, fmt.Errorf("%w: metaData.id is empty", ErrInvalidCommit)
	}
	if m.Format.Provider != "parquet" {
		return nil, fmt.Errorf("%w: format %q is not parquet", ErrInvalidCommit, m.Format.Provider)
	}
	schema, err := ParseSchema(m.SchemaString)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidCommit, err)
	}
	for _, pc := range m.PartitionColumns {
		f, ok := schema.Field(pc)
		if !ok {
			return nil, fmt.Errorf("%w: partition column %q is not in the schema", ErrInvalidCommit, pc)
		}
		switch f.Type.(type) {
		case *StructType, *ArrayType, *MapType:
			return nil, fmt.Errorf("%w: partition column %q has complex type %s", ErrInvalidCommit, pc, f.Type)
		}
	}
	if slices.Contains(m.PartitionColumns, "") {
		return nil, fmt.Errorf("%w: empty partition column name", ErrInvalidCommit)
	}
	mode := ColumnMappingMode(m)
	if mode == "none" {
		var bad string
		walkFields(schema, "", func(path string, f *StructField) bool {
			if NeedsColumnMapping(f.Name) {
				bad = path
				return false
			}
			return true
		})
		if bad != "" {
			return nil, fmt.Errorf("%w: column %q needs column mapping (delta.columnMapping.mode=name)", ErrInvalidCommit, bad)
		}
	} else {
		var bad string
		walkFields(schema, "", func(path string, f *StructField) bool {
			if _, ok := ColumnID(*f); !ok {
				bad = path
				return false
			}
			if id, _ := ColumnID(*f); id > MaxColumnID(m.Configuration) {
				bad = path
				return false
			}
			if pn, ok := f.Metadata[MetaColumnMappingPhysicalName].(string); !ok || pn == "" {
				bad = path
				return false
			}
			return true
		})
		if bad != "" {
			return nil, fmt.Errorf("%w: column %q lacks a physical name or a column mapping id ≤ %s (use AssignColumnMapping)", ErrInvalidCommit, bad, PropColumnMappingMaxID)
		}
	}
	return schema, nil
}

// checkPartitionValues requires every add and cdc action to carry a value (possibly null)
// for every partition column, keyed by physical name under column mapping.
func checkPartitionValues(actions []Action, meta *Metadata, schema *StructType) error {
	if len(meta.PartitionColumns) == 0 || schema == nil {
		return nil
	}
	keys := make([]string, 0, len(meta.PartitionColumns))
	for _, pc := range meta.PartitionColumns {
		key := pc
		if ColumnMappingMode(meta) != "none" {
			if f, ok := schema.Field(pc); ok {
				key = PhysicalName(f)
			}
		}
		keys = append(keys, key)
	}
	for _, a := range actions {
		var pv map[string]*string
		var path string
		switch {
		case a.Add != nil:
			pv, path = a.Add.PartitionValues, a.Add.Path
		case a.CDC != nil:
			pv, path = a.CDC.PartitionValues, a.CDC.Path
		default:
			continue
		}
		for _, k := range keys {
			if _, ok := pv[k]; !ok {
				return fmt.Errorf("%w: %s has no value for partition column %q", ErrInvalidCommit, path, k)
			}
		}
	}
	return nil
}
