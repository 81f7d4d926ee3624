package deltalog

import "encoding/json"

// Action is one line of a commit file: exactly one of its fields is set.
// Unknown action kinds are ignored on read, as the protocol requires.
type Action struct {
	Protocol       *Protocol       `json:"protocol,omitempty"`
	Metadata       *Metadata       `json:"metaData,omitempty"`
	Add            *Add            `json:"add,omitempty"`
	Remove         *Remove         `json:"remove,omitempty"`
	Txn            *Txn            `json:"txn,omitempty"`
	CommitInfo     *CommitInfo     `json:"commitInfo,omitempty"`
	CDC            *CDC            `json:"cdc,omitempty"`
	DomainMetadata *DomainMetadata `json:"domainMetadata,omitempty"`
	// CheckpointMetadata and Sidecar only appear inside v2 checkpoints.
	CheckpointMetadata *CheckpointMetadata `json:"checkpointMetadata,omitempty"`
	Sidecar            *Sidecar            `json:"sidecar,omitempty"`
}

// Protocol names the reader and writer versions and features a client needs.
type Protocol struct {
	MinReaderVersion int      `json:"minReaderVersion"`
	MinWriterVersion int      `json:"minWriterVersion"`
	ReaderFeatures   []string `json:"readerFeatures,omitempty"`
	WriterFeatures   []string `json:"writerFeatures,omitempty"`
}

// Format is the data file format of a table; always parquet.
type Format struct {
	Provider string            `json:"provider"`
	Options  map[string]string `json:"options"`
}

// Metadata is the metaData action: table identity, schema and properties.
type Metadata struct {
	ID               string            `json:"id"`
	Name             string            `json:"name,omitempty"`
	Description      string            `json:"description,omitempty"`
	Format           Format            `json:"format"`
	SchemaString     string            `json:"schemaString"`
	PartitionColumns []string          `json:"partitionColumns"`
	CreatedTime      *int64            `json:"createdTime,omitempty"`
	Configuration    map[string]string `json:"configuration"`
}

// DeletionVector describes the rows of a data file that are logically deleted.
type DeletionVector struct {
	StorageType    string `json:"storageType"`
	PathOrInlineDV string `json:"pathOrInlineDv"`
	Offset         *int32 `json:"offset,omitempty"`
	SizeInBytes    int32  `json:"sizeInBytes"`
	Cardinality    int64  `json:"cardinality"`
	MaxRowIndex    *int64 `json:"maxRowIndex,omitempty"`
}

// Add adds a logical file (a data file plus an optional deletion vector) to the table.
type Add struct {
	Path                    string             `json:"path"`
	PartitionValues         map[string]*string `json:"partitionValues"`
	Size                    int64              `json:"size"`
	ModificationTime        int64              `json:"modificationTime"`
	DataChange              bool               `json:"dataChange"`
	Stats                   string             `json:"stats,omitempty"`
	Tags                    map[string]string  `json:"tags,omitempty"`
	DeletionVector          *DeletionVector    `json:"deletionVector,omitempty"`
	BaseRowID               *int64             `json:"baseRowId,omitempty"`
	DefaultRowCommitVersion *int64             `json:"defaultRowCommitVersion,omitempty"`
	ClusteringProvider      string             `json:"clusteringProvider,omitempty"`
}

// Remove tombstones a logical file. Path and DeletionVector must equal those of the Add it removes.
type Remove struct {
	Path                    string             `json:"path"`
	DeletionTimestamp       *int64             `json:"deletionTimestamp,omitempty"`
	DataChange              bool               `json:"dataChange"`
	ExtendedFileMetadata    bool               `json:"extendedFileMetadata,omitempty"`
	PartitionValues         map[string]*string `json:"partitionValues,omitempty"`
	Size                    *int64             `json:"size,omitempty"`
	Stats                   string             `json:"stats,omitempty"`
	Tags                    map[string]string  `json:"tags,omitempty"`
	DeletionVector          *DeletionVector    `json:"deletionVector,omitempty"`
	BaseRowID               *int64             `json:"baseRowId,omitempty"`
	DefaultRowCommitVersion *int64             `json:"defaultRowCommitVersion,omitempty"`
}

// Txn (SetTransaction) records the latest version an application applied; cdc2delta uses it
// for Kafka offsets.
type Txn struct {
	AppID       string `json:"appId"`
	Version     int64  `json:"version"`
	LastUpdated *int64 `json:"lastUpdated,omitempty"`
}

// CommitInfo is free-form provenance. Known fields are typed; the rest round-trip in Extra.
type CommitInfo struct {
	Timestamp           *int64          `json:"timestamp,omitempty"`
	InCommitTimestamp   *int64          `json:"inCommitTimestamp,omitempty"`
	UserID              string          `json:"userId,omitempty"`
	UserName            string          `json:"userName,omitempty"`
	Operation           string          `json:"operation,omitempty"`
	OperationParameters OperationValues `json:"operationParameters,omitempty"`
	OperationMetrics    OperationValues `json:"operationMetrics,omitempty"`
	// Job and Notebook are Databricks' job and notebook objects, kept as stored.
	Job            json.RawMessage `json:"job,omitempty"`
	Notebook       json.RawMessage `json:"notebook,omitempty"`
	ClusterID      string          `json:"clusterId,omitempty"`
	ReadVersion    *int64          `json:"readVersion,omitempty"`
	IsolationLevel string          `json:"isolationLevel,omitempty"`
	IsBlindAppend  *bool           `json:"isBlindAppend,omitempty"`
	UserMetadata   string          `json:"userMetadata,omitempty"`
	EngineInfo     string          `json:"engineInfo,omitempty"`
	TxnID          string          `json:"txnId,omitempty"`
	// Extra holds fields not modelled above (clientVersion, tags, ...), and modelled ones
	// whose JSON type did not fit, kept verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// CDC adds a change data file (see Change Data Feed).
type CDC struct {
	Path            string             `json:"path"`
	PartitionValues map[string]*string `json:"partitionValues"`
	Size            int64              `json:"size"`
	DataChange      bool               `json:"dataChange"`
	Tags            map[string]string  `json:"tags,omitempty"`
}

// DomainMetadata carries named configuration; all domains, known or not, are preserved.
type DomainMetadata struct {
	Domain        string `json:"domain"`
	Configuration string `json:"configuration"`
	Removed       bool   `json:"removed"`
}

// CheckpointMetadata appears once in a v2 checkpoint.
type CheckpointMetadata struct {
	Version int64             `json:"version"`
	Tags    map[string]string `json:"tags,omitempty"`
}

// Sidecar references a file of add/remove actions belonging to a v2 checkpoint.
type Sidecar struct {
	Path             string            `json:"path"`
	SizeInBytes      int64             `json:"sizeInBytes"`
	ModificationTime int64             `json:"modificationTime"`
	Tags             map[string]string `json:"tags,omitempty"`
}
