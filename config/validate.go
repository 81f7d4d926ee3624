package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cdc2delta/cdc2delta/internal/urlcred"
	"github.com/cdc2delta/cdc2delta/processor/merge"
)

// ErrInvalid matches every *FieldError.
var ErrInvalid = errors.New("config: invalid")

// FieldError is one validation problem: Path names the field as written in the file
// ("tables.overrides[2].delete_mode") and Problem says what is wrong and what is accepted.
type FieldError struct {
	Path    string
	Problem string
}

func (e *FieldError) Error() string { return e.Path + ": " + e.Problem }

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *FieldError) Unwrap() error { return ErrInvalid }

// problems collects FieldErrors.
type problems []error

func (p *problems) add(path, format string, args ...any) {
	*p = append(*p, &FieldError{Path: path, Problem: fmt.Sprintf(format, args...)})
}

// oneOf checks that v is one of allowed.
func (p *problems) oneOf(path, v string, allowed ...string) {
	if !slices.Contains(allowed, v) {
		p.add(path, "%q is not one of %s", v, strings.Join(allowed, ", "))
	}
}

// Accepted values of the enumerated fields.
var (
	sasls          = []string{SASLPlain, SASLScram256, SASLScram512, SASLAWSMSKIAM}
	resets         = []string{ResetEarliest, ResetLatest}
	nullKeys       = []string{NullKeyError, NullKeyColumns}
	badInputs      = []string{BadInputFail, BadInputDLQ}
	deleteModes    = []string{DeleteHard, DeleteSoft}
	mergeModes     = []string{MergeAuto, MergeDV, MergeCoW}
	columnNames    = []string{ColumnsMapped, ColumnsPortable}
	timePrecisions = []string{"adaptive", "adaptive_time_microseconds", "connect"}
	decimalModes   = []string{"precise", "double", "string"}
	binaryModes    = []string{"bytes", "base64", "base64-url-safe", "hex"}
	converters     = []string{ConverterAvro, ConverterJSON}
	logLevels      = []string{"debug", "info", "warn", "error"}
	logFormats     = []string{"text", "json"}
	placeholders   = []string{"{topic}", "{database}", "{schema}", "{table}"}
)

var placeholderRE = regexp.MustCompile(`\{[^{}]*\}`)

// maxClientID is the longest client id the Kafka client sends.
const maxClientID = 256

// Validate reports every problem of the configuration at once, joined with errors.Join;
// each is a *FieldError naming its path and what is accepted.
func (c *Config) Validate() error {
	var p problems
	c.validateKafka(&p)
	c.validateRegistry(&p)
	c.validateTables(&p)
	c.validateLimits(&p)
	c.validateRest(&p)
	c.validateCatalog(&p)
	return errors.Join(p...)
}

func (c *Config) validateKafka(p *problems) {
	k := c.Kafka
	if len(k.Brokers) == 0 {
		p.add("kafka.brokers", "must list at least one host:port")
	}
	for i, b := range k.Brokers {
		if msg := hostPortProblem(b, false); msg != "" {
			p.add(fmt.Sprintf("kafka.brokers[%d]", i), "%s", msg)
		}
	}
	if k.GroupID == "" {
		p.add("kafka.group_id", "must be set (the consumer group id)")
	}
	if n := len(k.ClientID); n > maxClientID {
		p.add("kafka.client_id", "is %d bytes long; Kafka clients allow at most %d", n, maxClientID)
	}
	switch {
	case len(k.Topics) == 0 && k.TopicRegex == "":
		p.add("kafka.topics", "set topics (a list) or topic_regex")
	case len(k.Topics) > 0 && k.TopicRegex != "":
		p.add("kafka.topic_regex", "set either topics or topic_regex, not both")
	case k.TopicRegex != "":
		if _, err := regexp.Compile(k.TopicRegex); err != nil {
			p.add("kafka.topic_regex", "%q is not a regular expression: %v", k.TopicRegex, err)
		}
	}
	for i, t := range k.Topics {
		if t == "" {
			p.add(fmt.Sprintf("kafka.topics[%d]", i), "must not be empty")
		}
	}
	validateTLS(p, "kafka.tls", k.TLS)
	if s := k.SASL; s.Mechanism != "" {
		p.oneOf("kafka.sasl.mechanism", s.Mechanism, sasls...)
		if s.Mechanism != SASLAWSMSKIAM && slices.Contains(sasls, s.Mechanism) {
			if s.Username == "" {
				p.add("kafka.sasl.username", "must be set for %s", s.Mechanism)
			}
			if s.Password == "" {
				p.add("kafka.sasl.password", "must be set for %s", s.Mechanism)
			}
		}
	} else if k.SASL.Username != "" || k.SASL.Password != "" {
		p.add("kafka.sasl.mechanism", "must be set when a username or password is given; one of %s", strings.Join(sasls, ", "))
	}
	p.oneOf("kafka.reset", k.Reset, resets...)
	p.oneOf("kafka.group_protocol", k.GroupProtocol, GroupClassic, GroupConsumer)
	if d := k.FetchMaxWait; d < Duration(10*time.Millisecond) || d > Duration(5*time.Second) {
		p.add("kafka.fetch_max_wait", "must be from 10ms (franz-go's least) to 5s, got %s", d)
	}
	if b := k.FetchMinBytes; b < 1 || b > 16<<20 {
		p.add("kafka.fetch_min_bytes", "must be from 1 B to 16 MiB, got %d", int64(b))
	}
}

func validateTLS(p *problems, path string, t TLS) {
	if (t.CertFile == "") != (t.KeyFile == "") {
		p.add(path, "cert_file and key_file must be given together")
		return
	}
	if _, field, err := t.clientConfig(); err != nil {
		p.add(path+"."+field, "%v", err)
	}
}

func (c *Config) validateRegistry(p *problems) {
	r := c.SchemaRegistry
	if r.URL == "" && c.Decoding.Converter == ConverterJSON {
		return // JsonConverter records carry their schemas
	}
	if r.URL == "" {
		p.add("schema_registry.url", "must be set (http:// or https:// URL)")
	} else if u, err := url.Parse(r.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		p.add("schema_registry.url", "%q is not an http:// or https:// URL", urlcred.Redact(r.URL))
	} else if msg := urlPortProblem(u); msg != "" {
		p.add("schema_registry.url", "%q: %s", urlcred.Redact(r.URL), msg)
	} else if u.User != nil {
		// The registry client takes credentials out of the URL; they must
		// not also come from elsewhere.
		switch {
		case r.Username != "" || r.Password != "":
			p.add("schema_registry.url", "%q carries credentials, and schema_registry.username and password are set too: give them in one place",
				urlcred.Redact(r.URL))
		case r.BearerToken != "":
			p.add("schema_registry.url", "%q carries basic-auth credentials, and schema_registry.bearer_token is set too: use one",
				urlcred.Redact(r.URL))
		}
	}
	if (r.Username == "") != (r.Password == "") {
		p.add("schema_registry", "username and password must be given together")
	}
	if r.BearerToken != "" && r.Username != "" {
		p.add("schema_registry.bearer_token", "cannot be combined with username/password")
	}
	validateTLS(p, "schema_registry.tls", r.TLS)
}

func (c *Config) validateTables(p *problems) {
	t := c.Tables
	if t.Path == "" {
		p.add("tables.path", "must be set (a directory or s3://bucket/prefix with {topic}, {database}, {schema}, {table})")
	}
	for _, ph := range placeholderRE.FindAllString(t.Path, -1) {
		if !slices.Contains(placeholders, ph) {
			p.add("tables.path", "unknown placeholder %s; accepted: %s", ph, strings.Join(placeholders, ", "))
		}
	}
	if strings.ContainsAny(placeholderRE.ReplaceAllString(t.Path, ""), "{}") {
		p.add("tables.path", "%q has a { or } that is not part of a placeholder (%s)", urlcred.Redact(t.Path), strings.Join(placeholders, ", "))
	}
	if t.Path != "" && !strings.Contains(t.Path, "{table}") && !strings.Contains(t.Path, "{topic}") {
		p.add("tables.path", "%q must contain {table} or {topic}, or every topic would write one table", urlcred.Redact(t.Path))
	}
	if strings.Contains(t.Path, "://") && urlcred.HasUserinfo(t.Path) && !abfs(t.Path) {
		// Table paths name the table in every log line and metric.
		p.add("tables.path", "%q carries credentials; S3 credentials come from the AWS credential chain", urlcred.Redact(t.Path))
	}
	dlqNeeded := false
	checkSettings := func(path string, s TableSettings) {
		p.oneOf(path+".null_key", s.NullKey, nullKeys...)
		p.oneOf(path+".bad_input", s.BadInput, badInputs...)
		p.oneOf(path+".delete_mode", s.DeleteMode, deleteModes...)
		p.oneOf(path+".merge_mode", s.MergeMode, mergeModes...)
		p.oneOf(path+".column_names", s.ColumnNames, columnNames...)
		if s.TombstoneRetention <= 0 {
			p.add(path+".tombstone_retention", "must be positive, got %s", s.TombstoneRetention)
		} else if s.TombstoneRetention > MaxTombstoneRetention {
			p.add(path+".tombstone_retention", "%s is above %s (10 years): a tombstone only has to outlive the oldest "+
				"event that can still arrive (a replay from the start of the topic), and every tombstone is held in "+
				"memory and in the table's tombstone files until it expires", s.TombstoneRetention, MaxTombstoneRetention)
		}
		if s.NullKey == NullKeyColumns && len(s.KeyColumns) == 0 {
			p.add(path+".key_columns", "must be set when null_key is columns")
		}
		checkNames(p, path+".key_columns", s.KeyColumns)
		checkNames(p, path+".partition_by", s.PartitionBy)
		checkHistory(p, path, s)
		dlqNeeded = dlqNeeded || s.BadInput == BadInputDLQ
	}
	checkSettings("tables.defaults", t.Defaults)
	dvWithout := func(s TableSettings) bool { return s.MergeMode == MergeDV && !s.DeletionVectors }
	if dvWithout(t.Defaults) {
		p.add("tables.defaults.merge_mode", "dv needs deletion_vectors: true (a table created without deletion vectors is merged copy-on-write)")
	}
	seen := map[string]int{}
	for i, o := range t.Overrides {
		path := fmt.Sprintf("tables.overrides[%d]", i)
		match := "topic " + o.Topic
		switch {
		case (o.Topic == "") == (o.Name == ""):
			p.add(path, "set exactly one of topic or name")
		case o.Name != "":
			match = "name " + o.Name
			if n := strings.Count(o.Name, "."); n < 1 || n > 2 || slices.Contains(strings.Split(o.Name, "."), "") {
				p.add(path+".name", "%q is not schema.table or database.schema.table", o.Name)
			}
		}
		if j, dup := seen[match]; dup {
			p.add(path, "matches the same %s as tables.overrides[%d]", match, j)
		}
		seen[match] = i
		// Check what the override sets, not the defaults it inherits (reported once above).
		base := Default().Tables.Defaults
		base.KeyColumns = t.Defaults.KeyColumns
		checkSettings(path, o.apply(base))
		checkHistoryOnlyCombined(p, path, base, t.Defaults, o)
		if dvWithout(o.apply(t.Defaults)) && !dvWithout(t.Defaults) {
			p.add(path+".merge_mode", "dv needs deletion_vectors: true (a table created without deletion vectors is merged copy-on-write)")
		}
	}
	if dlqNeeded && c.Kafka.DLQTopic == "" {
		p.add("kafka.dlq_topic", "must be set because a table uses bad_input: dead-letter")
	}
}

// historyPlaceholders are what history_path may hold.
var historyPlaceholders = []string{"{path}", "{topic}", "{database}", "{schema}", "{table}"}

// checkHistory checks the history table's settings (ADR 0046).
func checkHistory(p *problems, path string, s TableSettings) {
	checkNames(p, path+".track_history", s.TrackHistory)
	checkNames(p, path+".track_history_except", s.TrackHistoryExcept)
	if len(s.TrackHistory) > 0 && len(s.TrackHistoryExcept) > 0 {
		p.add(path+".track_history_except", "set either track_history (the columns that open a new version) "+
			"or track_history_except (the columns that do not), not both")
	}
	hp := s.HistoryPath
	if hp == "" {
		p.add(path+".history_path", "must be set (a template such as {path}_history)")
		return
	}
	for _, ph := range placeholderRE.FindAllString(hp, -1) {
		if !slices.Contains(historyPlaceholders, ph) {
			p.add(path+".history_path", "unknown placeholder %s; accepted: %s", ph, strings.Join(historyPlaceholders, ", "))
		}
	}
	if strings.ContainsAny(placeholderRE.ReplaceAllString(hp, ""), "{}") {
		p.add(path+".history_path", "%q has a { or } that is not part of a placeholder (%s)", urlcred.Redact(hp), strings.Join(historyPlaceholders, ", "))
	}
	if hp == "{path}" {
		p.add(path+".history_path", "%q is the table itself; the history table needs its own path, such as {path}_history "+
			"(or set history: only to keep the history table instead of the table, at its path)", hp)
	}
	if s.History.Only() {
		checkHistoryOnly(p, path, s)
	}
}

// checkHistoryOnlyCombined refuses, at the override's path, what history:
// only cannot do in the settings the override and tables.defaults give
// together (history: only in one, delete_mode: soft in the other), which
// neither block's own check saw.
func checkHistoryOnlyCombined(p *problems, path string, base, defaults TableSettings, o TableOverride) {
	eff := o.apply(defaults)
	if !eff.History.Only() {
		return
	}
	if o.HistoryPath == nil {
		// A history_path of tables.defaults is for the tables that keep
		// theirs beside them.
		eff.HistoryPath = merge.DefaultHistoryPath
	}
	var seen, all problems
	if own := o.apply(base); own.History.Only() {
		checkHistoryOnly(&seen, path, own)
	}
	if defaults.History.Only() {
		checkHistoryOnly(&seen, path, defaults)
	}
	checkHistoryOnly(&all, path, eff)
	for _, e := range all {
		if !slices.ContainsFunc(seen, func(s error) bool { return s.Error() == e.Error() }) {
			fe := e.(*FieldError)
			p.add(fe.Path, "%s (with what tables.defaults sets)", fe.Problem)
		}
	}
}

// checkHistoryOnly refuses what a table whose only Delta table is its
// history table (history: only, ADR 0046) cannot do, each with what to do.
func checkHistoryOnly(p *problems, path string, s TableSettings) {
	const keep = "or set history: true to keep the current-state table beside the history table"
	if s.HistoryPath != merge.DefaultHistoryPath {
		p.add(path+".history_path", "is not used with history: only: the history table is the table, at its tables.path; remove history_path, %s", keep)
	}
	if s.DeleteMode == DeleteSoft {
		p.add(path+".delete_mode", "soft flags deleted rows in the current-state table, which history: only does not keep (a delete closes "+
			"the key's open version); set delete_mode: hard, %s", keep)
	}
	if s.ChangeDataFeed {
		p.add(path+".change_data_feed", "a history table has no change data feed (its rows are the versions); "+
			"for the change events set change_log: true, %s", keep)
	}
	if len(s.PartitionBy) > 0 {
		p.add(path+".partition_by", "a history table is unpartitioned; remove partition_by, %s", keep)
	}
	if s.MergeMode != "" && s.MergeMode != MergeAuto {
		p.add(path+".merge_mode", "%s sets how the current-state table is merged, which history: only does not keep; "+
			"a history table closes versions with deletion vectors unless deletion_vectors: false; remove merge_mode, %s", s.MergeMode, keep)
	}
}

func checkNames(p *problems, path string, names []string) {
	seen := map[string]bool{}
	for i, n := range names {
		lower := strings.ToLower(n)
		switch {
		case strings.TrimSpace(n) == "":
			p.add(fmt.Sprintf("%s[%d]", path, i), "must not be empty")
		case seen[lower]:
			p.add(fmt.Sprintf("%s[%d]", path, i), "%q is listed twice (column names are case-insensitive)", n)
		}
		seen[lower] = true
	}
}

// Upper bounds of the limits. Each exists to catch a unit mistake or a typo (9e18, 2000000h)
// before it makes the process misbehave; the messages say why.
const (
	MaxBatchRecords       = 1_000_000
	MaxBatchBytes         = ByteSize(1 << 30)
	MaxBatchAge           = Duration(time.Hour)
	MaxCommitsPerSecond   = 10_000
	MaxRetryBudget        = Duration(24 * time.Hour)
	MaxBufferedBytes      = ByteSize(32 << 30)
	MaxTombstoneRetention = Duration(10 * 365 * 24 * time.Hour)
	MaxCheckpointCommits  = 1000
)

func (c *Config) validateLimits(p *problems) {
	b := c.Batch
	switch {
	case b.MaxRecords <= 0:
		p.add("batch.max_records", "must be positive, got %d", b.MaxRecords)
	case b.MaxRecords > MaxBatchRecords:
		p.add("batch.max_records", "%d is above %d: a batch is held in memory until it commits, so a larger one "+
			"only costs memory and delays its commit", b.MaxRecords, MaxBatchRecords)
	}
	switch {
	case b.MaxBytes <= 0:
		p.add("batch.max_bytes", "must be positive, got %s", b.MaxBytes)
	case b.MaxBytes > MaxBatchBytes:
		p.add("batch.max_bytes", "%s is above %s: a batch's records are held in memory until it commits",
			b.MaxBytes, MaxBatchBytes)
	}
	switch {
	case b.MaxAge <= 0:
		p.add("batch.max_age", "must be positive, got %s", b.MaxAge)
	case b.MaxAge > MaxBatchAge:
		p.add("batch.max_age", "%s is above %s: a batch that does not fill commits when it is this old, and Delta "+
			"readers see none of its changes until then, so a longer age only delays them (a quiet table would commit "+
			"only at shutdown)", b.MaxAge, MaxBatchAge)
	}
	switch {
	case b.MinRecords <= 0:
		p.add("batch.min_records", "must be positive, got %d (1 commits every batch at max_age)", b.MinRecords)
	case b.MinRecords > MaxBatchRecords:
		p.add("batch.min_records", "%d is above %d, the most batch.max_records can be", b.MinRecords, MaxBatchRecords)
	case b.MaxRecords > 0 && b.MaxRecords <= MaxBatchRecords && b.MinRecords > b.MaxRecords:
		p.add("batch.min_records", "%d is above batch.max_records (%d): a batch commits when it reaches max_records, "+
			"so it never waits for more", b.MinRecords, b.MaxRecords)
	}
	switch {
	case b.MaxDelay <= 0:
		p.add("batch.max_delay", "must be positive, got %s", b.MaxDelay)
	case b.MaxDelay > MaxBatchAge:
		p.add("batch.max_delay", "%s is above %s: it bounds how long a change waits before readers see it, so a "+
			"longer one only delays them (a quiet table would commit only at shutdown)", b.MaxDelay, MaxBatchAge)
	case b.MaxAge > 0 && b.MaxAge <= MaxBatchAge && b.MaxDelay < b.MaxAge:
		p.add("batch.max_delay", "%s is below batch.max_age (%s): a batch below the caps waits at least max_age "+
			"and at most max_delay", b.MaxDelay, b.MaxAge)
	}
	switch n := b.MaxCommitsPerSecond; {
	case n < 0:
		p.add("batch.max_commits_per_second", "must be 0 (unlimited) or more, got %d", n)
	case n > MaxCommitsPerSecond:
		p.add("batch.max_commits_per_second", "%d is above %d: a Delta commit takes milliseconds, so the budget would "+
			"never hold one back; 0 turns it off", n, MaxCommitsPerSecond)
	}
	switch r := c.Retry.Budget; {
	case r <= 0:
		p.add("retry.budget", "must be positive, got %s", r)
	case r > MaxRetryBudget:
		p.add("retry.budget", "%s is above %s: a table retrying a failure is reported stalled (in /readyz and "+
			"cdc2delta_table_state) only after the budget, so a longer one hides an outage", r, MaxRetryBudget)
	}
	controlProblems(c.Control, p)
	switch m := c.Memory.MaxBufferedBytes; {
	case m <= 0:
		p.add("memory.max_buffered_bytes", "must be positive, got %s", m)
	case m > MaxBufferedBytes:
		p.add("memory.max_buffered_bytes", "%s is above %s: buffered records are held in the process's memory, "+
			"beside every table's key index", m, MaxBufferedBytes)
	case b.MaxBytes > 0 && b.MaxBytes <= MaxBatchBytes && m < b.MaxBytes:
		p.add("memory.max_buffered_bytes", "%s is below batch.max_bytes (%s); a single batch could never fill",
			m, b.MaxBytes)
	}
	if n := c.Memory.OpenConcurrency; n < 1 || n > 256 {
		p.add("memory.open_concurrency", "must be 1 to 256, got %d: each table opening at once holds its "+
			"snapshot and the buffers of the files it indexes", n)
	}
	keyIndexProblems(c, p)
	maintenanceProblems(c.Maintenance, p)
}

// keyIndexProblems checks where the key indexes live (ADR 0034).
func keyIndexProblems(c *Config, p *problems) {
	m := c.Memory
	switch m.KeyIndex {
	case KeyIndexMemory, KeyIndexDisk:
	default:
		p.add("memory.key_index", "must be %s or %s, got %q", KeyIndexMemory, KeyIndexDisk, m.KeyIndex)
	}
	if n := m.KeyIndexMemoryKeys; n < 1 || n > 1<<27 {
		p.add("memory.key_index_memory_keys", "must be 1 to %d, got %d: the changed keys an index on disk holds "+
			"in memory (about 56 bytes each) before it writes them to a run", 1<<27, n)
	}
	if m.KeyIndex == KeyIndexDisk && m.KeyIndexDir == "" && strings.Contains(c.Tables.Path, "://") {
		p.add("memory.key_index_dir", "is required with memory.key_index %s when tables are on object storage "+
			"(tables.path %q): the runs are read a block at a time, from a local directory", KeyIndexDisk, c.Tables.Path)
	}
}

// maintenanceProblems checks the maintenance block (ADR 0032).
func maintenanceProblems(m Maintenance, p *problems) {
	if n := m.CompactAt; n < 1 || n > 10_000 {
		p.add("maintenance.compact_at", "must be 1 to 10000 objects of debt, got %d", n)
	}
	if r := m.PurgeRatio; !(r > 0 && r <= 1) {
		p.add("maintenance.purge_ratio", "must be above 0 and at most 1 (the share of a file's rows deleted), got %v", r)
	}
	if b := m.MaxCompactBytes; b < 1<<20 || b > 64<<30 {
		p.add("maintenance.max_compact_bytes", "must be 1MiB to 64GiB, got %s", b)
	}
	if n := m.MaxCompactRows; n < 1<<16 || n > 1<<31 {
		p.add("maintenance.max_compact_rows", "must be 65536 to %d, got %d: the table's writer indexes every row "+
			"a compaction rewrites before it commits again", int64(1)<<31, n)
	}
	if n := m.CheckpointCommits; n < 1 || n > MaxCheckpointCommits {
		p.add("maintenance.checkpoint_commits", "must be 1 to %d, got %d", MaxCheckpointCommits, n)
	}
	switch n := m.CheckpointMaxCommits; {
	case n < 1 || n > 10_000:
		p.add("maintenance.checkpoint_max_commits", "must be 1 to 10000, got %d: "+
			"it bounds the log a reader replays after the last checkpoint", n)
	case m.CheckpointCommits >= 1 && m.CheckpointCommits <= MaxCheckpointCommits && n < m.CheckpointCommits:
		p.add("maintenance.checkpoint_max_commits", "%d is below maintenance.checkpoint_commits (%d): a table is "+
			"checkpointed after checkpoint_max_commits versions, whatever checkpoint_commits says", n, m.CheckpointCommits)
	}
	if d := m.CheckpointInterval; d <= 0 || d > Duration(24*time.Hour) {
		p.add("maintenance.checkpoint_interval", "must be above 0 and at most 24h, got %s", d)
	}
	if d := m.VacuumInterval; d != 0 && (d < Duration(time.Hour) || d > Duration(30*24*time.Hour)) {
		p.add("maintenance.vacuum_interval", "must be 0 (never) or 1h to 720h, got %s: VACUUM lists every "+
			"object under the table", d)
	}
	if b := m.TailFileSize; b < 0 || b > 64<<20 {
		p.add("maintenance.tail_file_size", "must be 0 (off) to 64MiB, got %s: each small commit rewrites up to this much", b)
	}
	if n := m.Concurrency; n < 1 || n > 64 {
		p.add("maintenance.concurrency", "must be 1 to 64 tables at once, got %d", n)
	}
}

// hostPortProblem says what is wrong with a host:port address ("" when nothing is);
// emptyHost allows ":port" (listen on every interface).
func hostPortProblem(addr string, emptyHost bool) string {
	host, port, err := net.SplitHostPort(addr)
	switch {
	case err != nil || port == "":
		if emptyHost {
			return fmt.Sprintf("%q is not host:port or :port", addr)
		}
		return fmt.Sprintf("%q is not host:port", addr)
	case host == "" && !emptyHost:
		return fmt.Sprintf("%q has no host", addr)
	}
	return portProblem(addr, port)
}

func portProblem(addr, port string) string {
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Sprintf("%q: port %s is not a number from 1 to 65535", addr, port)
	}
	return ""
}

func urlPortProblem(u *url.URL) string {
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Sprintf("port %s is not a number from 1 to 65535", p)
		}
	}
	return ""
}

func (c *Config) validateRest(p *problems) {
	if e := c.Storage.S3.Endpoint; e != "" {
		if u, err := url.Parse(e); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			p.add("storage.s3.endpoint", "%q is not an http:// or https:// URL", urlcred.Redact(e))
		} else if msg := urlPortProblem(u); msg != "" {
			p.add("storage.s3.endpoint", "%q: %s", urlcred.Redact(e), msg)
		} else if u.User != nil {
			p.add("storage.s3.endpoint", "%q carries credentials; S3 credentials come from the AWS credential chain", urlcred.Redact(e))
		}
	}
	if c.Storage.S3.RequestTimeout < 0 {
		p.add("storage.s3.request_timeout", "must not be negative, got %s", c.Storage.S3.RequestTimeout)
	}
	c.validateAzure(p)
	c.validateGCS(p)
	p.oneOf("decoding.time_precision_mode", c.Decoding.TimePrecisionMode, timePrecisions...)
	p.oneOf("decoding.decimal_handling_mode", c.Decoding.DecimalHandlingMode, decimalModes...)
	p.oneOf("decoding.binary_handling_mode", c.Decoding.BinaryHandlingMode, binaryModes...)
	p.oneOf("decoding.converter", c.Decoding.Converter, converters...)
	c.validateDeclared(p)
	if l := c.Metrics.Listen; l != "" {
		if msg := hostPortProblem(l, true); msg != "" {
			p.add("metrics.listen", "%s (empty disables the listener)", msg)
		}
	}
	p.oneOf("log.level", c.Log.Level, logLevels...)
	p.oneOf("log.format", c.Log.Format, logFormats...)
}

// MaxControlInterval bounds control.interval.
const MaxControlInterval = Duration(time.Hour)

func controlProblems(ctl Control, p *problems) {
	if ctl.Path == "" {
		if len(ctl.Groups) > 0 || ctl.TransactionTopic != "" {
			p.add("control.path", "is needed for control.groups and control.transaction_topic: the control table is where they are kept")
		}
		return
	}
	switch i := ctl.Interval; {
	case i <= 0:
		p.add("control.interval", "must be positive, got %s", i)
	case i > MaxControlInterval:
		p.add("control.interval", "%s is above %s: finalized_until would lag the tables by that much", i, MaxControlInterval)
	}
	seen := map[string]bool{}
	for i, g := range ctl.Groups {
		path := fmt.Sprintf("control.groups[%d]", i)
		switch {
		case g.Name == "":
			p.add(path+".name", "is required")
		case seen[g.Name]:
			p.add(path+".name", "%q names two groups", g.Name)
		}
		seen[g.Name] = true
		if len(g.Tables) == 0 {
			p.add(path+".tables", "lists no table")
		}
		for j, t := range g.Tables {
			if parts := strings.Split(t, "."); len(parts) != 3 || slices.Contains(parts, "") {
				p.add(fmt.Sprintf("%s.tables[%d]", path, j), "%q is not database.schema.table, as Debezium's source block names it", t)
			}
		}
	}
}

var connectTypes = []string{"boolean", "int8", "int16", "int32", "int64", "float", "double", "string", "bytes"}

// validateDeclared checks the declarations of schemas.enable=false topics.
func (c *Config) validateDeclared(p *problems) {
	if len(c.Decoding.Declared) > 0 && c.Decoding.Converter != ConverterJSON {
		p.add("decoding.declared", "needs decoding.converter: json (records without a schema are JsonConverter's)")
	}
	topics := map[string]bool{}
	for i, d := range c.Decoding.Declared {
		path := fmt.Sprintf("decoding.declared[%d]", i)
		if d.Topic == "" || topics[d.Topic] {
			p.add(path+".topic", "%q is empty or declared twice", d.Topic)
		}
		topics[d.Topic] = true
		if len(d.Columns) == 0 {
			p.add(path+".columns", "must list the row's columns")
		}
		names := map[string]bool{}
		for i, col := range d.Columns {
			cp := fmt.Sprintf("%s.columns[%d]", path, i)
			if col.Name == "" || names[col.Name] {
				p.add(cp+".name", "%q is empty or listed twice", col.Name)
			}
			names[col.Name] = true
			p.oneOf(cp+".type", col.Type, connectTypes...)
			if col.Logical == "org.apache.kafka.connect.data.Decimal" &&
				(col.Type != "bytes" || col.Precision < 1 || col.Precision > 38 || col.Scale < 0 || col.Scale > col.Precision) {
				p.add(cp, "a Decimal needs type bytes, precision 1-38 and scale 0-precision, got %s (%d,%d)", col.Type, col.Precision, col.Scale)
			}
		}
		if len(d.Key) == 0 {
			p.add(path+".key", "must name the key columns")
		}
		for i, k := range d.Key {
			if !names[k] {
				p.add(fmt.Sprintf("%s.key[%d]", path, i), "%q is not a declared column", k)
			}
		}
	}
}
