package deltalog

import (
	"errors"
	"slices"
	"strconv"
	"strings"
)

// Table property keys this package interprets.
const (
	PropAppendOnly               = "delta.appendOnly"
	PropColumnMappingMode        = "delta.columnMapping.mode"
	PropColumnMappingMaxID       = "delta.columnMapping.maxColumnId"
	PropEnableDeletionVectors    = "delta.enableDeletionVectors"
	PropEnableChangeDataFeed     = "delta.enableChangeDataFeed"
	PropEnableInCommitTimestamps = "delta.enableInCommitTimestamps"
	PropICTEnablementVersion     = "delta.inCommitTimestampEnablementVersion"
	PropICTEnablementTimestamp   = "delta.inCommitTimestampEnablementTimestamp"
	PropCheckpointInterval       = "delta.checkpointInterval"
	PropLogRetentionDuration     = "delta.logRetentionDuration"
	PropDeletedFileRetention     = "delta.deletedFileRetentionDuration"
	PropEnableExpiredLogCleanup  = "delta.enableExpiredLogCleanup"
	PropSetTxnRetentionDuration  = "delta.setTransactionRetentionDuration"
)

// ReaderFeatureSet returns every feature a reader must support: the listed readerFeatures
// for reader version 3, otherwise those implied by the legacy version.
func (p Protocol) ReaderFeatureSet() []string {
	switch {
	case p.MinReaderVersion >= 3:
		return slices.Clone(p.ReaderFeatures)
	case p.MinReaderVersion == 2:
		return legacyReaderFeatures(2)
	}
	return nil
}

// WriterFeatureSet returns every feature a writer must support: the listed writerFeatures
// (plus readerFeatures) for writer version 7, otherwise those implied by the legacy version.
func (p Protocol) WriterFeatureSet() []string {
	var out []string
	switch {
	case p.MinWriterVersion >= 7:
		out = append(slices.Clone(p.WriterFeatures), p.ReaderFeatures...)
	case p.MinWriterVersion >= 1:
		out = legacyWriterFeatures(min(p.MinWriterVersion, 6))
		out = append(out, p.ReaderFeatureSet()...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// HasWriterFeature reports whether writers must support the named feature.
func (p Protocol) HasWriterFeature(name string) bool {
	return slices.Contains(p.WriterFeatureSet(), name)
}

// HasReaderFeature reports whether readers must support the named feature.
func (p Protocol) HasReaderFeature(name string) bool {
	return slices.Contains(p.ReaderFeatureSet(), name)
}

// CheckRead refuses a table this package cannot read correctly.
func (p Protocol) CheckRead() error {
	if p.MinReaderVersion > 3 || p.MinReaderVersion < 1 {
		return &UnsupportedFeatureError{Feature: "minReaderVersion " + strconv.Itoa(p.MinReaderVersion)}
	}
	for _, f := range p.ReaderFeatureSet() {
		if fs, ok := lookupFeature(f); !ok || !fs.read {
			return &UnsupportedFeatureError{Feature: f}
		}
	}
	// A writer-only feature never blocks reading, even when unknown: readers must ignore it.
	return nil
}

// CheckWrite refuses writes that could break the table: unknown or unimplemented writer
// features, and implemented ones that are active in a way we cannot honour (invariants,
// CHECK constraints, generated, identity or default columns). appendOnly is enforced per
// commit by Commit. meta may be nil (protocol-only check).
func (p Protocol) CheckWrite(meta *Metadata, schema *StructType) error {
	if err := p.CheckRead(); err != nil {
		if e, ok := errors.AsType[*UnsupportedFeatureError](err); ok {
			e.Write = true
		}
		return err
	}
	if p.MinWriterVersion > 7 || p.MinWriterVersion < 1 {
		return &UnsupportedFeatureError{Feature: "minWriterVersion " + strconv.Itoa(p.MinWriterVersion), Write: true}
	}
	for _, f := range p.WriterFeatureSet() {
		if fs, ok := lookupFeature(f); !ok || !fs.write {
			return &UnsupportedFeatureError{Feature: f, Write: true}
		}
	}
	if meta != nil {
		for k := range meta.Configuration {
			if strings.HasPrefix(k, "delta.constraints.") && p.HasWriterFeature(FeatureCheckConstraints) {
				return &UnsupportedFeatureError{Feature: FeatureCheckConstraints, Write: true,
					Reason: "table has CHECK constraint " + k}
			}
		}
		if mode := meta.Configuration[PropColumnMappingMode]; mode != "" && mode != "none" && mode != "name" {
			return &UnsupportedFeatureError{Feature: FeatureColumnMapping, Write: true,
				Reason: "mode " + mode + " (only name is written)"}
		}
	}
	if schema != nil {
		if err := checkActiveColumnFeatures(p, schema); err != nil {
			return err
		}
	}
	return nil
}

// checkActiveColumnFeatures refuses writes when a column uses a writer feature that needs
// per-row work we do not do.
func checkActiveColumnFeatures(p Protocol, schema *StructType) error {
	checks := []struct {
		feature string
		key     string
		prefix  bool
	}{
		{FeatureInvariants, "delta.invariants", false},
		{FeatureGeneratedColumns, "delta.generationExpression", false},
		{FeatureIdentityColumns, "delta.identity.", true},
		{FeatureAllowColumnDefaults, "CURRENT_DEFAULT", false},
	}
	var err error
	walkFields(schema, "", func(path string, f *StructField) bool {
		for _, c := range checks {
			if !p.HasWriterFeature(c.feature) {
				continue
			}
			for k := range f.Metadata {
				if k == c.key || (c.prefix && strings.HasPrefix(k, c.key)) {
					err = &UnsupportedFeatureError{Feature: c.feature, Write: true, Reason: "column " + path + " has " + k}
					return false
				}
			}
		}
		return true
	})
	return err
}

// MinimalProtocol returns the smallest protocol a new table with this schema and these
// properties needs. Legacy versions are preferred because more readers accept them; table
// features (3,7) or (1,7) are used only when a needed feature has no legacy version
// (timestampNtz, deletionVectors, inCommitTimestamp). See ADR 0010.
func MinimalProtocol(schema *StructType, config map[string]string) Protocol {
	reader, writer := neededFeatures(schema, config)
	// Spark treats every NOT NULL column as an invariant and refuses even to read a
	// writer-7 table whose schema has one without listing the feature (writer 2 implies
	// it). Tables others created without it stay writable: this is for ours only.
	if schema != nil && !walkFields(schema, "", func(_ string, f *StructField) bool { return f.Nullable }) {
		writer = append(writer, FeatureInvariants)
	}
	return protocolFor(reader, writer)
}

// MinimalFeaturesProtocol is MinimalProtocol in table-features form whenever a reader
// feature is needed: column mapping alone gives reader 3 and writer 7 with columnMapping
// in both lists instead of the legacy (2,5). Legacy reader version 2 lists no reader
// feature, and readers that check only the list (delta-rs 1.6's pyarrow reader behind
// to_pandas and to_pyarrow_dataset) then read a column-mapped table as if it had none,
// every value null; with the feature listed they refuse the table. A protocol without
// reader features is MinimalProtocol's.
func MinimalFeaturesProtocol(schema *StructType, config map[string]string) Protocol {
	p := MinimalProtocol(schema, config)
	if p.MinReaderVersion != 2 {
		return p
	}
	reader, writer := neededFeatures(schema, config)
	if schema != nil && !walkFields(schema, "", func(_ string, f *StructField) bool { return f.Nullable }) {
		writer = append(writer, FeatureInvariants)
	}
	return featuresProtocol(reader, writer)
}

// neededFeatures lists the reader (R+W) and writer-only features that a schema and
// table properties make necessary.
func neededFeatures(schema *StructType, config map[string]string) (reader, writer []string) {
	if schema != nil && schemaHasType(schema, TypeTimestampNTZ) {
		reader = append(reader, FeatureTimestampNTZ)
	}
	if isTrue(config[PropEnableDeletionVectors]) {
		reader = append(reader, FeatureDeletionVectors)
	}
	if m := config[PropColumnMappingMode]; m != "" && m != "none" {
		reader = append(reader, FeatureColumnMapping)
	}
	if isTrue(config[PropEnableChangeDataFeed]) {
		writer = append(writer, FeatureChangeDataFeed)
	}

	if isTrue(config[PropAppendOnly]) {
		writer = append(writer, FeatureAppendOnly)
	}
	if isTrue(config[PropEnableInCommitTimestamps]) {
		writer = append(writer, FeatureInCommitTimestamp)
	}
	return reader, writer
}

// protocolFor builds the smallest protocol listing the given reader (R+W) and writer-only
// features, preferring legacy versions when every feature has one.
func protocolFor(reader, writer []string) Protocol {
	legacyOK := true
	for _, f := range append(slices.Clone(reader), writer...) {
		if legacyWriterVersionFor(f) == 0 {
			legacyOK = false
		}
	}
	if legacyOK {
		p := Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
		for _, f := range append(slices.Clone(reader), writer...) {
			p.MinWriterVersion = max(p.MinWriterVersion, legacyWriterVersionFor(f))
			if f == FeatureColumnMapping {
				p.MinReaderVersion = 2
			}
		}
		return p
	}
	return featuresProtocol(reader, writer)
}

// featuresProtocol lists the features in a table-features protocol: reader 3 when a
// reader feature is needed (else 1), writer 7.
func featuresProtocol(reader, writer []string) Protocol {
	all := append(slices.Clone(reader), writer...)
	slices.Sort(all)
	all = slices.Compact(all)
	r := slices.Clone(reader)
	slices.Sort(r)
	r = slices.Compact(r)
	p := Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: all}
	if len(r) > 0 {
		p.MinReaderVersion = 3
		p.ReaderFeatures = r
	}
	return p
}

// legacyWriterVersionFor is the legacy writer version that first implies f, or 0.
func legacyWriterVersionFor(f string) int {
	for v := 2; v <= 6; v++ {
		if slices.Contains(legacyWriterFeatures(v), f) {
			return v
		}
	}
	return 0
}

// UpgradeProtocol returns a protocol that satisfies both cur and need, never dropping a
// feature cur has. Two legacy protocols combine by version; otherwise the result uses table
// features, listing every feature the legacy versions implied.
func UpgradeProtocol(cur, need Protocol) Protocol {
	if cur.MinWriterVersion < 7 && need.MinWriterVersion < 7 && cur.MinReaderVersion < 3 && need.MinReaderVersion < 3 {
		return Protocol{
			MinReaderVersion: max(cur.MinReaderVersion, need.MinReaderVersion),
			MinWriterVersion: max(cur.MinWriterVersion, need.MinWriterVersion),
		}
	}
	var reader []string
	for _, p := range []Protocol{cur, need} {
		for _, f := range p.WriterFeatureSet() {
			if fs, ok := lookupFeature(f); ok && fs.readerWriter {
				reader = append(reader, f)
			}
		}
		reader = append(reader, p.ReaderFeatureSet()...)
	}
	writer := append(cur.WriterFeatureSet(), need.WriterFeatureSet()...)
	out := protocolFor(reader, writer)
	if cur.MinWriterVersion >= 7 && out.MinWriterVersion < 7 {
		// A table on table features stays on them, listing every feature.
		out = featuresProtocol(reader, writer)
	}
	if out.MinWriterVersion < 7 {
		// Both inputs were legacy-expressible after all; keep the larger legacy versions.
		return Protocol{
			MinReaderVersion: max(cur.MinReaderVersion, need.MinReaderVersion, out.MinReaderVersion),
			MinWriterVersion: max(cur.MinWriterVersion, need.MinWriterVersion, out.MinWriterVersion),
		}
	}
	// A table already on reader 2 keeps at least reader 2 semantics via features.
	out.MinReaderVersion = max(out.MinReaderVersion, min(cur.MinReaderVersion, 3), min(need.MinReaderVersion, 3))
	if out.MinReaderVersion == 3 && out.ReaderFeatures == nil {
		out.ReaderFeatures = []string{}
	}
	return out
}

// Equal reports whether two protocols are identical, ignoring feature order.
func (p Protocol) Equal(q Protocol) bool {
	if p.MinReaderVersion != q.MinReaderVersion || p.MinWriterVersion != q.MinWriterVersion {
		return false
	}
	a, b := slices.Sorted(slices.Values(p.ReaderFeatures)), slices.Sorted(slices.Values(q.ReaderFeatures))
	c, d := slices.Sorted(slices.Values(p.WriterFeatures)), slices.Sorted(slices.Values(q.WriterFeatures))
	return slices.Equal(a, b) && slices.Equal(c, d)
}

func isTrue(s string) bool { return strings.EqualFold(strings.TrimSpace(s), "true") }

func schemaHasType(st *StructType, want PrimitiveType) bool {
	found := false
	var visit func(t Type)
	visit = func(t Type) {
		switch t := t.(type) {
		case PrimitiveType:
			if t == want {
				found = true
			}
		case *StructType:
			for _, f := range t.Fields {
				visit(f.Type)
			}
		case *ArrayType:
			visit(t.ElementType)
		case *MapType:
			visit(t.KeyType)
			visit(t.ValueType)
		}
	}
	visit(st)
	return found
}

// walkFields visits every struct field depth-first, including fields of structs nested in
// arrays and maps; fn returns false to stop.
func walkFields(st *StructType, prefix string, fn func(path string, f *StructField) bool) bool {
	for i := range st.Fields {
		f := &st.Fields[i]
		p := joinPath(prefix, f.Name)
		if !fn(p, f) {
			return false
		}
		if !walkNested(f.Type, p, fn) {
			return false
		}
	}
	return true
}

func walkNested(t Type, path string, fn func(string, *StructField) bool) bool {
	switch t := t.(type) {
	case *StructType:
		return walkFields(t, path, fn)
	case *ArrayType:
		return walkNested(t.ElementType, path+".element", fn)
	case *MapType:
		return walkNested(t.KeyType, path+".key", fn) && walkNested(t.ValueType, path+".value", fn)
	}
	return true
}
