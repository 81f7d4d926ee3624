package deltalog

import (
	"errors"
	"fmt"
	"log/slog"
)

// Table feature names as they appear in protocol.readerFeatures / writerFeatures.
const (
	FeatureAppendOnly           = "appendOnly"
	FeatureInvariants           = "invariants"
	FeatureCheckConstraints     = "checkConstraints"
	FeatureChangeDataFeed       = "changeDataFeed"
	FeatureGeneratedColumns     = "generatedColumns"
	FeatureColumnMapping        = "columnMapping"
	FeatureIdentityColumns      = "identityColumns"
	FeatureDeletionVectors      = "deletionVectors"
	FeatureRowTracking          = "rowTracking"
	FeatureTimestampNTZ         = "timestampNtz"
	FeatureDomainMetadata       = "domainMetadata"
	FeatureV2Checkpoint         = "v2Checkpoint"
	FeatureIcebergCompatV1      = "icebergCompatV1"
	FeatureIcebergCompatV2      = "icebergCompatV2"
	FeatureClustering           = "clustering"
	FeatureInCommitTimestamp    = "inCommitTimestamp"
	FeatureVacuumProtocolCheck  = "vacuumProtocolCheck"
	FeatureCheckpointProtection = "checkpointProtection"
	FeatureAllowColumnDefaults  = "allowColumnDefaults"
	FeatureTypeWidening         = "typeWidening"
	FeatureVariantType          = "variantType"
	FeatureCatalogManaged       = "catalogManaged"
)

// ErrUnsupportedFeature matches every *UnsupportedFeatureError.
var ErrUnsupportedFeature = errors.New("deltalog: unsupported table feature")

// UnsupportedFeatureError refuses a table, naming the feature (or protocol version) that
// this implementation cannot honour. Write distinguishes a refused write (the table is
// still readable) from a refused read.
type UnsupportedFeatureError struct {
	Feature string
	Write   bool
	// Reason says why, when the feature is known but its current use is not supported.
	Reason string
}

// Error implements error.
func (e *UnsupportedFeatureError) Error() string {
	op := "read"
	if e.Write {
		op = "write"
	}
	msg := fmt.Sprintf("deltalog: cannot %s table: unsupported feature %q", op, e.Feature)
	if e.Reason != "" {
		msg += " (" + e.Reason + ")"
	}
	return msg
}

// Unwrap makes errors.Is(err, ErrUnsupportedFeature) true.
func (e *UnsupportedFeatureError) Unwrap() error { return ErrUnsupportedFeature }

// featureSupport says what this implementation does with a feature it knows.
type featureSupport struct {
	readerWriter bool // listed in both lists (R+W); otherwise writer-only
	read         bool // we read tables that list it
	write        bool // we may write tables that list it (subject to activity checks)
}

// lookupFeature is the feature registry. Anything absent is unknown and refused for
// reading (if a reader feature) and writing. See docs/adr/0010-delta-protocol-and-features.md.
func lookupFeature(name string) (featureSupport, bool) {
	switch name {
	case FeatureAppendOnly, FeatureChangeDataFeed, FeatureDomainMetadata, FeatureInCommitTimestamp:
		return featureSupport{read: true, write: true}, true
	case FeatureInvariants, FeatureCheckConstraints, FeatureGeneratedColumns, FeatureIdentityColumns,
		FeatureAllowColumnDefaults:
		// Writable while inactive: CheckWrite refuses once a column or property uses them.
		return featureSupport{read: true, write: true}, true
	case FeatureCheckpointProtection:
		// Commits are fine; log cleanup is skipped on such tables.
		return featureSupport{read: true, write: true}, true
	case FeatureColumnMapping, FeatureDeletionVectors, FeatureTimestampNTZ, FeatureVacuumProtocolCheck:
		return featureSupport{readerWriter: true, read: true, write: true}, true
	case FeatureV2Checkpoint:
		return featureSupport{readerWriter: true, read: true}, true
	case FeatureRowTracking, FeatureIcebergCompatV1, FeatureIcebergCompatV2, FeatureClustering,
		"coordinatedCommits-preview", "materializePartitionColumns":
		// Writer features whose per-file duties we do not implement: readable, not writable.
		return featureSupport{read: true}, true
	case FeatureTypeWidening, "typeWidening-preview", FeatureVariantType, "variantType-preview",
		"variantShredding", "variantShredding-preview", FeatureCatalogManaged, "catalogOwned-preview":
		// Known reader features we cannot honour: reading would silently misread data.
		return featureSupport{readerWriter: true}, true
	}
	return featureSupport{}, false
}

// legacyReaderFeatures returns the features a legacy minReaderVersion (1 or 2) implies.
func legacyReaderFeatures(v int) []string {
	if v == 2 {
		return []string{FeatureColumnMapping}
	}
	return nil
}

// legacyWriterFeatures returns the features a legacy minWriterVersion (1..6) implies; each
// version includes the previous one's.
func legacyWriterFeatures(v int) []string {
	var out []string
	if v >= 2 {
		out = append(out, FeatureAppendOnly, FeatureInvariants)
	}
	if v >= 3 {
		out = append(out, FeatureCheckConstraints)
	}
	if v >= 4 {
		out = append(out, FeatureChangeDataFeed, FeatureGeneratedColumns)
	}
	if v >= 5 {
		out = append(out, FeatureColumnMapping)
	}
	if v >= 6 {
		out = append(out, FeatureIdentityColumns)
	}
	return out
}

// LogValue renders the refusal as structured log attributes.
func (e *UnsupportedFeatureError) LogValue() slog.Value {
	return slog.GroupValue(slog.String("feature", e.Feature), slog.Bool("write", e.Write), slog.String("reason", e.Reason))
}
