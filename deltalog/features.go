package deltalog

import (
	"errors"
	"fmt"
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

// knownFeatures is the feature registry. Anything absent is unknown and refused for both
// reading (if a reader feature) and writing. See docs/adr/0010-delta-protocol-and-features.md.
var knownFeatures = map[string]featureSupport{
	FeatureAppendOnly:       {read: true, write: true},
	FeatureInvariants:       {read: true, write: true}, // writes refused while any invariant exists
	FeatureCheckConstraints: {read: true, write: true}, // writes refused while any constraint exists
	FeatureChangeDataFeed:   {read: true, write: true},
	FeatureGeneratedColumns: {read: true, write: true}, // writes refused while any generated column exists
	FeatureColumnMapping:    {readerWriter: true, read: true, write: true},
	FeatureIdentityColumns:  {read: true, write: true}, // writes refused while any identity column exists
	FeatureDeletionVectors:  {readerWriter: true, read: true, write: true},
	FeatureRowTracking:      {read: true},
	FeatureTimestampNTZ:     {readerWriter: true, read: true, write: true},
	FeatureDomainMetadata:   {read: true, write: true},
	FeatureV2Checkpoint:     {readerWriter: true, read: true},
	FeatureIcebergCompatV1:  {read: true},
	FeatureIcebergCompatV2:  {read: true},
	FeatureClustering:       {read: true},
	FeatureInCommitTimestamp: {
		read: true, write: true,
	},
	FeatureVacuumProtocolCheck:  {readerWriter: true, read: true, write: true},
	FeatureCheckpointProtection: {read: true, write: true}, // log cleanup is skipped
	FeatureAllowColumnDefaults:  {read: true, write: true}, // writes refused while any default exists
	// Known but unsupported reader features: reading would silently misread data.
	FeatureTypeWidening:           {readerWriter: true},
	"typeWidening-preview":        {readerWriter: true},
	FeatureVariantType:            {readerWriter: true},
	"variantType-preview":         {readerWriter: true},
	"variantShredding":            {readerWriter: true},
	"variantShredding-preview":    {readerWriter: true},
	FeatureCatalogManaged:         {readerWriter: true},
	"catalogOwned-preview":        {readerWriter: true},
	"coordinatedCommits-preview":  {read: true},
	"materializePartitionColumns": {read: true},
}

// legacyReaderFeatures are implied by a legacy minReaderVersion (index = version).
var legacyReaderFeatures = [][]string{
	1: {},
	2: {FeatureColumnMapping},
}

// legacyWriterFeatures are implied by a legacy minWriterVersion; each includes the previous.
var legacyWriterFeatures = [][]string{
	1: {},
	2: {FeatureAppendOnly, FeatureInvariants},
	3: {FeatureAppendOnly, FeatureInvariants, FeatureCheckConstraints},
	4: {FeatureAppendOnly, FeatureInvariants, FeatureCheckConstraints, FeatureChangeDataFeed, FeatureGeneratedColumns},
	5: {FeatureAppendOnly, FeatureInvariants, FeatureCheckConstraints, FeatureChangeDataFeed, FeatureGeneratedColumns,
		FeatureColumnMapping},
	6: {FeatureAppendOnly, FeatureInvariants, FeatureCheckConstraints, FeatureChangeDataFeed, FeatureGeneratedColumns,
		FeatureColumnMapping, FeatureIdentityColumns},
}
