package config

import (
	"github.com/cdc2delta/cdc2delta/processor"
	"github.com/cdc2delta/cdc2delta/processor/controller"
	"github.com/cdc2delta/cdc2delta/processor/merge"
)

// Config is the whole configuration file.
type Config struct {
	Kafka          Kafka          `yaml:"kafka"`
	SchemaRegistry SchemaRegistry `yaml:"schema_registry"`
	Tables         Tables         `yaml:"tables"`
	Batch          Batch          `yaml:"batch"`
	Memory         Memory         `yaml:"memory"`
	Maintenance    Maintenance    `yaml:"maintenance"`
	Storage        Storage        `yaml:"storage"`
	Decoding       Decoding       `yaml:"decoding"`
	Retry          Retry          `yaml:"retry"`
	Control        Control        `yaml:"control"`
	Catalog        Catalog        `yaml:"catalog"`
	// Catalogs are further catalogs by name; a table group picks one with
	// tables.defaults.catalog or tables.overrides[].catalog (ADR 0047).
	Catalogs map[string]Catalog `yaml:"catalogs"`
	Metrics  Metrics            `yaml:"metrics"`
	Log      Log                `yaml:"log"`
}

// Kafka is the consumer group and its connection.
type Kafka struct {
	// Brokers are bootstrap host:port addresses.
	Brokers []string `yaml:"brokers"`
	// GroupID is the consumer group id.
	GroupID string `yaml:"group_id"`
	// InstanceID enables static membership (rolling restarts without rebalances).
	InstanceID string `yaml:"instance_id"`
	// ClientID is the client id Kafka's tools show for each member.
	ClientID string `yaml:"client_id"`
	// Topics lists the topics to consume; exclusive with TopicRegex.
	Topics []string `yaml:"topics"`
	// TopicRegex consumes every topic matching the regular expression.
	TopicRegex string `yaml:"topic_regex"`
	TLS        TLS    `yaml:"tls"`
	SASL       SASL   `yaml:"sasl"`
	// Reset is where a partition with no Delta txn and no group offset starts.
	Reset string `yaml:"reset"`
	// DLQTopic receives records of tables whose bad_input policy is dead-letter.
	DLQTopic string `yaml:"dlq_topic"`
	// DLQCreate creates a missing dead-letter topic instead of stopping the tables
	// that need it.
	DLQCreate bool `yaml:"dlq_create"`
	// GroupProtocol is classic (cooperative-sticky, any broker) or consumer (KIP-848,
	// Kafka 4.0+).
	GroupProtocol string `yaml:"group_protocol"`
	// FetchMaxWait and FetchMinBytes let the broker hold a fetch until it
	// has FetchMinBytes or FetchMaxWait passed, so a process reading many
	// quiet partitions does not fetch (and poll) once per record.
	FetchMaxWait  Duration `yaml:"fetch_max_wait"`
	FetchMinBytes ByteSize `yaml:"fetch_min_bytes"`
}

// TLS configures a TLS client. It is enabled when Enabled is set or any file is given.
type TLS struct {
	Enabled            bool   `yaml:"enabled"`
	CAFile             string `yaml:"ca_file"`
	CertFile           string `yaml:"cert_file"`
	KeyFile            string `yaml:"key_file"`
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify"`
}

// On reports whether TLS is to be used.
func (t TLS) On() bool {
	return t.Enabled || t.CAFile != "" || t.CertFile != "" || t.KeyFile != "" || t.InsecureSkipVerify
}

// SASL configures Kafka authentication; an empty Mechanism disables it.
type SASL struct {
	Mechanism string `yaml:"mechanism"`
	Username  string `yaml:"username"`
	Password  Secret `yaml:"password"`
}

// SASL mechanisms.
const (
	SASLPlain       = "PLAIN"
	SASLScram256    = "SCRAM-SHA-256"
	SASLScram512    = "SCRAM-SHA-512"
	SASLAWSMSKIAM   = "AWS_MSK_IAM"
	GroupClassic    = "classic"
	GroupConsumer   = "consumer"
	ResetEarliest   = "earliest"
	ResetLatest     = "latest"
	defaultMetrics  = ":9464"
	ConverterAvro   = "avro"
	ConverterJSON   = "json"
	defaultLogLevel = "info"
)

// SchemaRegistry is the Confluent-compatible registry the Avro schemas come from.
type SchemaRegistry struct {
	URL         string `yaml:"url"`
	Username    string `yaml:"username"`
	Password    Secret `yaml:"password"`
	BearerToken Secret `yaml:"bearer_token"`
	TLS         TLS    `yaml:"tls"`
}

// Tables routes topics to Delta tables and sets their policies.
type Tables struct {
	// Path is the table location template: a local directory or s3://bucket/prefix,
	// with {topic}, {database}, {schema} and {table}.
	Path string `yaml:"path"`
	// Defaults apply to every table.
	Defaults TableSettings `yaml:"defaults"`
	// Overrides change settings of the tables they match.
	Overrides []TableOverride `yaml:"overrides"`
}

// TableSettings are the per-table policies.
type TableSettings struct {
	// KeyColumns are the primary key columns of tables whose records carry no key.
	KeyColumns []string `yaml:"key_columns"`
	// NullKey is what a record without a key does: error, or columns (key from KeyColumns).
	NullKey string `yaml:"null_key"`
	// BadInput is the policy for undecodable records: fail or dead-letter.
	BadInput string `yaml:"bad_input"`
	// DeleteMode is hard (remove the row) or soft (flag it deleted).
	DeleteMode string `yaml:"delete_mode"`
	// TombstoneRetention is how long a hard-deleted key is remembered.
	TombstoneRetention Duration `yaml:"tombstone_retention"`
	// MergeMode is auto, dv (deletion vectors) or cow (copy-on-write).
	MergeMode string `yaml:"merge_mode"`
	// ChangeDataFeed turns on delta.enableChangeDataFeed for new tables.
	ChangeDataFeed bool `yaml:"change_data_feed"`
	// ChangeLog also keeps, beside each table at <path>_changes, an append-only
	// Delta table of every change event applied (the bronze layer, ADR 0031).
	ChangeLog bool `yaml:"change_log"`
	// History keeps a history table (SCD type 2, ADR 0046) of every version
	// of every row: true beside the table, at HistoryPath; only instead of
	// it, at the table's own path (no current-state table is written).
	History HistoryMode `yaml:"history"`
	// HistoryPath is the history table's location template when History is
	// true: {path} is the table's path; {topic}, {database}, {schema} and
	// {table} as in tables.path. Not used with history: only.
	HistoryPath string `yaml:"history_path"`
	// TrackHistory lists the only source columns whose change opens a new
	// version; a change of another column updates the open version in place.
	// Empty: every column. Not with TrackHistoryExcept.
	TrackHistory []string `yaml:"track_history"`
	// TrackHistoryExcept lists the source columns whose change updates the
	// open version in place; every other column opens a new version.
	TrackHistoryExcept []string `yaml:"track_history_except"`
	// PartitionBy are the partition columns of new tables.
	PartitionBy []string `yaml:"partition_by"`
	// DeletionVectors gives new tables deletion vectors (merge-on-read); false
	// creates tables that readers without deletion vector support open
	// (delta-rs to_pandas). ADR 0027.
	DeletionVectors bool `yaml:"deletion_vectors"`
	// ColumnNames is how new tables name source columns Delta refuses without
	// column mapping: mapped (keep the name, column mapping) or portable
	// (Unit Price becomes Unit_Price, no column mapping).
	ColumnNames string `yaml:"column_names"`
	// Catalog names the catalog the table is registered in: a key of
	// catalogs:, or "default" (and empty) for the catalog: block.
	Catalog string `yaml:"catalog"`
}

// TableOverride is a TableSettings patch for the tables it matches: by Topic (exact
// topic name) or by Name ("schema.table" or "database.schema.table"). Unset fields keep
// the defaults.
type TableOverride struct {
	Topic              string       `yaml:"topic"`
	Name               string       `yaml:"name"`
	KeyColumns         []string     `yaml:"key_columns"`
	NullKey            *string      `yaml:"null_key"`
	BadInput           *string      `yaml:"bad_input"`
	DeleteMode         *string      `yaml:"delete_mode"`
	TombstoneRetention *Duration    `yaml:"tombstone_retention"`
	MergeMode          *string      `yaml:"merge_mode"`
	ChangeDataFeed     *bool        `yaml:"change_data_feed"`
	ChangeLog          *bool        `yaml:"change_log"`
	History            *HistoryMode `yaml:"history"`
	HistoryPath        *string      `yaml:"history_path"`
	Catalog            *string      `yaml:"catalog"`
	TrackHistory       []string     `yaml:"track_history"`
	TrackHistoryExcept []string     `yaml:"track_history_except"`
	PartitionBy        []string     `yaml:"partition_by"`
	DeletionVectors    *bool        `yaml:"deletion_vectors"`
	ColumnNames        *string      `yaml:"column_names"`
}

// Policy values.
const (
	NullKeyError     = "error"
	NullKeyColumns   = "columns"
	BadInputFail     = "fail"
	BadInputDLQ      = "dead-letter"
	DeleteHard       = "hard"
	DeleteSoft       = "soft"
	MergeAuto        = "auto"
	MergeDV          = "dv"
	MergeCoW         = "cow"
	ColumnsMapped    = "mapped"
	ColumnsPortable  = "portable"
	defaultTablePath = "./tables/{database}/{schema}/{table}"
)

// Batch bounds each table's micro-batch and sets the commit budget (ADR
// 0030): a batch is committed at once when it reaches MaxRecords or
// MaxBytes; with MinRecords entries, once it is MaxAge old (within
// MaxCommitsPerSecond); with fewer, once it is MaxDelay old.
type Batch struct {
	MaxRecords int      `yaml:"max_records"`
	MaxBytes   ByteSize `yaml:"max_bytes"`
	MaxAge     Duration `yaml:"max_age"`
	// MinRecords is how many entries a batch waits for, up to MaxDelay,
	// before MaxAge commits it.
	MinRecords int `yaml:"min_records"`
	// MaxDelay is the freshness bound: no batch waits longer.
	MaxDelay Duration `yaml:"max_delay"`
	// MaxCommitsPerSecond is shared by all tables (0: unlimited); it holds
	// batches past MaxAge, never past MaxDelay.
	MaxCommitsPerSecond int `yaml:"max_commits_per_second"`
	// CommitWhenDrained commits a batch of MinRecords before MaxAge once
	// its table has read its partitions to their high watermarks.
	CommitWhenDrained bool `yaml:"commit_when_drained"`
}

// Memory bounds the process.
type Memory struct {
	// MaxBufferedBytes bounds record bytes pending over all tables; fetching pauses above it.
	MaxBufferedBytes ByteSize `yaml:"max_buffered_bytes"`
	// OpenConcurrency bounds the tables opened (snapshot read, key index
	// built) at once, at a restart or a rebalance.
	OpenConcurrency int `yaml:"open_concurrency"`
	// KeyIndex is where each table's index of live keys lives:
	// KeyIndexMemory or KeyIndexDisk (ADR 0034).
	KeyIndex string `yaml:"key_index"`
	// KeyIndexDir holds the on-disk indexes, one subdirectory per table;
	// empty: each local table's _cdc2delta/index. Required for S3 tables.
	KeyIndexDir string `yaml:"key_index_dir"`
	// KeyIndexMemoryKeys is how many changed keys an on-disk index holds
	// in memory before it flushes them to a run.
	KeyIndexMemoryKeys int `yaml:"key_index_memory_keys"`
}

// Key index places.
const (
	// KeyIndexMemory keeps every live key in memory (56 bytes a key) and
	// rebuilds the index from the data files at each open.
	KeyIndexMemory = "memory"
	// KeyIndexDisk keeps the keys in sorted runs on local disk, with the
	// recent changes and about 1.5 bytes a key in memory, and opens from
	// the last saved manifest.
	KeyIndexDisk = "disk"
)

// Maintenance is the tables' automatic upkeep beside ingest (ADR 0032):
// compaction, checkpoints with log cleanup, and VACUUM.
type Maintenance struct {
	Enabled bool `yaml:"enabled"`
	// CompactAt is the debt (objects a full scan reads beyond what
	// compaction would leave) at which a table is compacted.
	CompactAt int `yaml:"compact_at"`
	// PurgeRatio is the share of a large file's rows its deletion vector
	// must hide for compaction to rewrite it.
	PurgeRatio float64 `yaml:"purge_ratio"`
	// MaxCompactBytes bounds what one compaction rewrites.
	MaxCompactBytes ByteSize `yaml:"max_compact_bytes"`
	// MaxCompactRows bounds the rows one compaction of a table (or its
	// history table) rewrites, and the rows of a compacted file: the
	// table's writer indexes every one before it commits again.
	MaxCompactRows int64 `yaml:"max_compact_rows"`
	// A table is checkpointed CheckpointCommits versions and
	// CheckpointInterval after its last checkpoint, or after
	// CheckpointMaxCommits versions whatever the time.
	CheckpointCommits    int      `yaml:"checkpoint_commits"`
	CheckpointInterval   Duration `yaml:"checkpoint_interval"`
	CheckpointMaxCommits int      `yaml:"checkpoint_max_commits"`
	// VacuumInterval is how often VACUUM runs, with each table's own
	// retention; 0: never.
	VacuumInterval Duration `yaml:"vacuum_interval"`
	// Concurrency bounds the tables maintained at once.
	Concurrency int `yaml:"concurrency"`
	// TailFileSize: a small batch's new rows go into the table's smallest
	// file below it instead of a new file; 0 turns it off.
	TailFileSize ByteSize `yaml:"tail_file_size"`
}

// Storage configures object storage for s3://, Azure and gs:// table paths.
type Storage struct {
	S3    S3    `yaml:"s3"`
	Azure Azure `yaml:"azure"`
	GCS   GCS   `yaml:"gcs"`
}

// S3 options; credentials come from the standard AWS chain.
type S3 struct {
	Endpoint  string `yaml:"endpoint"`
	Region    string `yaml:"region"`
	PathStyle bool   `yaml:"path_style"`
	// RequestTimeout is how long one S3 request may make no progress before it
	// fails as a transient error; zero: the store's default (10s).
	RequestTimeout Duration `yaml:"request_timeout"`
}

// Azure options for abfss://, az:// and https://ACCOUNT.blob.core.windows.net
// paths. Credentials, first set first: an account key, a SAS token, a service
// principal's client secret, else the SDK's default chain (environment,
// workload identity, managed identity, Azure CLI). Empty fields take
// AZURE_STORAGE_ACCOUNT_NAME, AZURE_STORAGE_ACCOUNT_KEY,
// AZURE_STORAGE_SAS_TOKEN and CDC2DELTA_AZURE_ENDPOINT from the environment.
type Azure struct {
	// Account names the storage account of az:// paths.
	Account string `yaml:"account"`
	// Endpoint overrides the Blob service URL (Azurite:
	// http://127.0.0.1:10000/devstoreaccount1).
	Endpoint     string `yaml:"endpoint"`
	AccountKey   Secret `yaml:"account_key"`
	SASToken     Secret `yaml:"sas_token"`
	TenantID     string `yaml:"tenant_id"`
	ClientID     string `yaml:"client_id"`
	ClientSecret Secret `yaml:"client_secret"`
	// RequestTimeout is how long one request may make no progress before it
	// fails as a transient error; zero: the store's default (10s).
	RequestTimeout Duration `yaml:"request_timeout"`
}

// GCS options for gs:// paths.
type GCS struct {
	// Endpoint is a GCS emulator's URL; empty: Google Cloud Storage (or
	// STORAGE_EMULATOR_HOST). With it and no CredentialsFile, no credentials.
	Endpoint string `yaml:"endpoint"`
	// CredentialsFile is a service-account key file; empty: the application
	// default credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud, metadata).
	CredentialsFile string `yaml:"credentials_file"`
	// RequestTimeout is how long one GCS request may make no progress before it
	// fails as a transient error; zero: the store's default (10s).
	RequestTimeout Duration `yaml:"request_timeout"`
}

// Decoding mirrors the Debezium connector settings the topics were produced with.
type Decoding struct {
	// Converter is the connector's key and value converter: avro (Confluent's
	// AvroConverter with the schema registry) or json (Kafka's JsonConverter
	// with schemas.enable=true, every record carrying its schema).
	Converter string `yaml:"converter"`
	// Declared types the topics whose records the JsonConverter wrote with
	// schemas.enable=false (no schema in the record).
	Declared            []DeclaredTable `yaml:"declared"`
	TimePrecisionMode   string          `yaml:"time_precision_mode"`
	DecimalHandlingMode string          `yaml:"decimal_handling_mode"`
	BinaryHandlingMode  string          `yaml:"binary_handling_mode"`
}

// DeclaredTable is a topic's row and key, by column name.
type DeclaredTable struct {
	Topic string `yaml:"topic"`
	// Key names the key columns in the order of the record key's fields.
	Key     []string         `yaml:"key"`
	Columns []DeclaredColumn `yaml:"columns"`
}

// DeclaredColumn is one column as a Kafka Connect schema describes it.
type DeclaredColumn struct {
	Name string `yaml:"name"`
	// Type is the Connect type: boolean, int8, int16, int32, int64, float32,
	// float64, string or bytes.
	Type string `yaml:"type"`
	// Logical is the Connect or Debezium semantic type the connector names
	// the column's schema with (org.apache.kafka.connect.data.Decimal,
	// io.debezium.time.MicroTimestamp, ...).
	Logical   string `yaml:"logical"`
	Scale     int    `yaml:"scale"`
	Precision int    `yaml:"precision"`
	Optional  bool   `yaml:"optional"`
}

// Control is the control table (ADR 0029): how far each table is complete, and each
// group's finalized_until.
type Control struct {
	// Path is the control table's location (a local directory or s3://bucket/prefix);
	// empty keeps no control table.
	Path string `yaml:"path"`
	// Interval is how often it is brought up to date.
	Interval Duration `yaml:"interval"`
	// TransactionTopic is Debezium's transaction topic (<topic.prefix>.transaction, with
	// provide.transaction.metadata=true): completeness then follows each transaction's
	// END counts. Empty: a watermark over each table's partitions.
	TransactionTopic string `yaml:"transaction_topic"`
	// Groups are sets of source tables read together, each with a finalized_until.
	Groups []ControlGroup `yaml:"groups"`
}

// ControlGroup names a set of source tables (database.schema.table).
type ControlGroup struct {
	Name   string   `yaml:"name"`
	Tables []string `yaml:"tables"`
}

// Retry bounds the retrying of transient failures (storage, registry or Kafka outages).
type Retry struct {
	// Budget is how long a table retries one failure before it is reported stalled
	// (in /readyz and cdc2delta_table_state); it keeps retrying.
	Budget Duration `yaml:"budget"`
}

// Metrics is the HTTP listener of /metrics, /healthz and /readyz; empty Listen disables it.
type Metrics struct {
	Listen string `yaml:"listen"`
}

// Log configures the process log.
type Log struct {
	Level  string `yaml:"level"`
	Format string `yaml:"format"`
}

// Default returns the configuration every file starts from. Its values
// come from the packages that run them (processor.DefaultOptions,
// merge.DefaultOptions), so the file's defaults are what a Processor left
// to its own defaults runs (ADR 0037).
func Default() Config {
	p, b, m, sink := processor.DefaultOptions(), processor.DefaultBatchLimits(), processor.DefaultMaintenance(), merge.DefaultOptions()
	return Config{
		Kafka: Kafka{Reset: p.ResetOffset, GroupProtocol: p.GroupProtocol, ClientID: p.ClientID,
			FetchMaxWait: Duration(p.FetchMaxWait), FetchMinBytes: ByteSize(p.FetchMinBytes)},
		SchemaRegistry: SchemaRegistry{},
		Tables: Tables{
			Path: defaultTablePath,
			Defaults: TableSettings{
				NullKey:            NullKeyError,
				BadInput:           string(p.BadInput),
				DeleteMode:         string(sink.DeleteMode),
				TombstoneRetention: Duration(sink.TombstoneRetention),
				MergeMode:          string(sink.Mode),
				DeletionVectors:    *sink.DeletionVectors,
				ColumnNames:        string(sink.ColumnNames),
				Catalog:            DefaultCatalog,
				HistoryPath:        merge.DefaultHistoryPath,
			},
		},
		Batch: Batch{MaxRecords: b.Records, MaxBytes: ByteSize(b.Bytes), MaxAge: Duration(b.Age),
			MinRecords: b.MinRecords, MaxDelay: Duration(b.MaxDelay), MaxCommitsPerSecond: int(b.CommitsPerSecond),
			CommitWhenDrained: b.Drained},
		Memory: Memory{MaxBufferedBytes: ByteSize(p.MaxBufferedBytes), OpenConcurrency: p.OpenConcurrency,
			KeyIndex: KeyIndexMemory, KeyIndexMemoryKeys: merge.DefaultIndexMemoryKeys},
		Maintenance: Maintenance{Enabled: true, CompactAt: m.CompactAt, PurgeRatio: m.PurgeRatio,
			MaxCompactBytes: ByteSize(m.MaxCompactBytes), MaxCompactRows: m.MaxCompactRows, CheckpointCommits: m.CheckpointCommits,
			CheckpointInterval: Duration(m.CheckpointInterval), CheckpointMaxCommits: m.CheckpointMaxCommits,
			VacuumInterval: Duration(m.VacuumInterval), Concurrency: m.Concurrency, TailFileSize: ByteSize(m.TailFileSize)},
		Decoding: Decoding{Converter: ConverterAvro, TimePrecisionMode: "adaptive", DecimalHandlingMode: "precise", BinaryHandlingMode: "bytes"},
		Retry:    Retry{Budget: Duration(p.RetryBudget)},
		Control:  Control{Interval: Duration(controller.DefaultInterval)},
		Metrics:  Metrics{Listen: defaultMetrics},
		Log:      Log{Level: defaultLogLevel, Format: "text"},
	}
}
