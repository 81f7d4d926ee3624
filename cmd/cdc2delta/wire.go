package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	saslaws "github.com/twmb/franz-go/pkg/sasl/aws"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/cdc2delta/cdc2delta/cmd/internal/runopts"
	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/config"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/urlcred"
	"github.com/cdc2delta/cdc2delta/processor"
	"github.com/cdc2delta/cdc2delta/processor/controller"
	"github.com/cdc2delta/cdc2delta/processor/route"
)

// processorOptions maps the configuration onto processor.Options. Each table gets its
// own settings (tables.defaults patched by the overrides that match it) through
// processor.Options.PerTable; settings `run` cannot apply are refused with a usage error
// rather than silently ignored.
func processorOptions(c config.Config, logger *slog.Logger) (processor.Options, error) {
	if err := checkTableSettings(c); err != nil {
		return processor.Options{}, err
	}
	clientOpts, err := kafkaOpts(c.Kafka)
	if err != nil {
		return processor.Options{}, err
	}
	dec, err := newDecoder(c, logger)
	if err != nil {
		return processor.Options{}, err
	}
	tables := c.Tables
	perTable := func(src route.TableSource) processor.TableSettings {
		s := tables.Settings(configSource(src))
		ts := processor.TableSettings{Sink: runopts.Sink(s, logger), BadInput: processor.Policy(s.BadInput)}
		if c.Memory.KeyIndex == config.KeyIndexDisk {
			ts.Sink.IndexDir, ts.Sink.IndexMemoryKeys = keyIndexDir(c.Memory, src.Path), c.Memory.KeyIndexMemoryKeys
		}
		if s.ChangeLog {
			ts.ChangeLog = changeLogPath(src.Path)
		}
		switch s.History {
		case config.HistoryBeside:
			ts.History, ts.HistoryOptions = historyPath(s.HistoryPath, src), runopts.History(s, logger)
		case config.HistoryOnly:
			// The history table instead of the table, at its path (ADR 0046).
			ts.HistoryOnly, ts.HistoryOptions = true, runopts.History(s, logger)
		}
		return ts
	}
	opts := runopts.Processor(c, logger)
	opts.ClientOptions, opts.OpenStore, opts.PerTable, opts.Decoder = clientOpts, storeOpener(c.Storage), perTable, dec
	return opts, nil
}

// newDecoder builds the decoder with the configured schema registry, as `run` decodes.
func newDecoder(c config.Config, logger *slog.Logger) (*codecs.Decoder, error) {
	opts := codecs.Options{
		Converter:      codecs.Converter(c.Decoding.Converter),
		BinaryHandling: codecs.BinaryMode(c.Decoding.BinaryHandlingMode), KeyColumns: keyColumns(c), Logger: logger,
	}
	for _, d := range c.Decoding.Declared {
		t := codecs.DeclaredTable{Key: d.Key}
		for _, col := range d.Columns {
			t.Columns = append(t.Columns, codecs.DeclaredColumn(col))
		}
		if opts.Declared == nil {
			opts.Declared = map[string]codecs.DeclaredTable{}
		}
		opts.Declared[d.Topic] = t
	}
	if opts.Converter == codecs.ConverterJSON {
		dec, err := codecs.NewDecoder(nil, opts)
		if err != nil {
			return nil, fmt.Errorf("decoder: %w", err)
		}
		return dec, nil
	}
	regOpts := codecs.RegistryOptions{
		URLs: []string{c.SchemaRegistry.URL}, User: c.SchemaRegistry.Username, MaxAttempts: 1,
		Password: c.SchemaRegistry.Password.Reveal(), BearerToken: c.SchemaRegistry.BearerToken.Reveal(), Logger: logger,
	}
	if c.SchemaRegistry.TLS.On() {
		tc, err := c.SchemaRegistry.TLS.ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("schema_registry.tls: %w", err)
		}
		regOpts.TLS = tc
	}
	reg, err := codecs.NewRegistry(regOpts)
	if err != nil {
		return nil, fmt.Errorf("schema registry: %w", err)
	}
	dec, err := codecs.NewDecoder(reg, opts)
	if err != nil {
		return nil, fmt.Errorf("decoder: %w", err)
	}
	return dec, nil
}

// keyIndexDir is the directory of a table's on-disk key index: under
// memory.key_index_dir, named by the escaped table path so that no two
// tables share one, or else beside a local table's data.
func keyIndexDir(m config.Memory, table string) string {
	if m.KeyIndexDir != "" {
		return filepath.Join(m.KeyIndexDir, url.PathEscape(table))
	}
	return filepath.Join(table, "_cdc2delta", "index")
}

// kafkaOpts are the client options for the connection settings (TLS, SASL).
func kafkaOpts(k config.Kafka) ([]kgo.Opt, error) {
	var opts []kgo.Opt
	if k.TLS.On() {
		tc, err := k.TLS.ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("kafka.tls: %w", err)
		}
		opts = append(opts, kgo.DialTLSConfig(tc))
	}
	if k.SASL.Mechanism != "" {
		opts = append(opts, kgo.SASL(saslMechanism(k.SASL)))
	}
	return opts, nil
}

// checkTableSettings refuses table settings `run` cannot apply, each named by its path
// with what to do instead. `validate` checks them too (configFlags.load), so the two agree.
func checkTableSettings(c config.Config) error {
	if bad := tableSettingProblems(c); len(bad) > 0 {
		return usagef("cannot run with these table settings:\n  %s", strings.Join(bad, "\n  "))
	}
	return nil
}

// tableSettingProblems lists the table settings `run` cannot apply.
func tableSettingProblems(c config.Config) []string {
	t := c.Tables
	var bad []string
	if c.Kafka.TopicRegex != "" && t.Defaults.NullKey == config.NullKeyColumns {
		bad = append(bad, "tables.defaults.null_key: columns needs kafka.topics, not topic_regex (the decoder "+
			"looks key columns up by table name, so every keyless table must be named up front); "+
			"set null_key: columns in an override per keyless table")
	}
	someKeyless := t.Defaults.NullKey == config.NullKeyColumns || slices.ContainsFunc(t.Overrides, func(o config.TableOverride) bool {
		return t.Settings(overrideSource(o)).NullKey == config.NullKeyColumns
	})
	if len(t.Defaults.KeyColumns) > 0 && !someKeyless {
		bad = append(bad, "tables.defaults.key_columns: used only by tables whose null_key is columns; set null_key: columns")
	}
	for i, o := range t.Overrides {
		p := fmt.Sprintf("tables.overrides[%d].", i)
		if o.KeyColumns != nil && t.Settings(overrideSource(o)).NullKey != config.NullKeyColumns {
			bad = append(bad, p+"key_columns: used only when the table's null_key is columns; add null_key: columns")
		}
	}
	return bad
}

// keyColumns maps each keyless table (null_key: columns) to its key columns, keyed as
// the decoder looks them up: "database.schema.table" for every listed topic, or, with a
// topic regex (no table known up front), the names the overrides give.
func keyColumns(c config.Config) map[string][]string {
	out := map[string][]string{}
	add := func(name string, s config.TableSettings) {
		if s.NullKey == config.NullKeyColumns && len(s.KeyColumns) > 0 {
			out[name] = s.KeyColumns
		}
	}
	if c.Kafka.TopicRegex == "" {
		for _, topic := range c.Kafka.Topics {
			src := topicSource(topic)
			if src.Table != "" {
				add(src.Database+"."+src.Schema+"."+src.Table, c.Tables.Settings(src))
			}
		}
		return out
	}
	for _, o := range c.Tables.Overrides {
		src := overrideSource(o)
		name := o.Name
		if o.Topic != "" {
			if src.Table == "" {
				continue
			}
			name = src.Database + "." + src.Schema + "." + src.Table
		}
		add(name, c.Tables.Settings(src))
	}
	return out
}

// topicSource names the source table of a Debezium topic
// (<prefix>.<database>.<schema>.<table>); the names stay empty for a shorter topic.
func topicSource(topic string) config.Source { return configSource(route.ParseTopic(topic)) }

// configSource is the source table the router named, as the configuration's
// overrides match it.
func configSource(src route.TableSource) config.Source {
	return config.Source{Topic: src.Topic, Database: src.Database, Schema: src.Schema, Table: src.Table}
}

// overrideSource is the source table an override names: by topic, or by
// "schema.table" / "database.schema.table".
func overrideSource(o config.TableOverride) config.Source {
	if o.Topic != "" {
		return topicSource(o.Topic)
	}
	f := strings.Split(o.Name, ".")
	switch len(f) {
	case 2:
		return config.Source{Schema: f[0], Table: f[1]}
	case 3:
		return config.Source{Database: f[0], Schema: f[1], Table: f[2]}
	}
	return config.Source{}
}

func saslMechanism(s config.SASL) sasl.Mechanism {
	switch s.Mechanism {
	case config.SASLScram256:
		return scram.Auth{User: s.Username, Pass: s.Password.Reveal()}.AsSha256Mechanism()
	case config.SASLScram512:
		return scram.Auth{User: s.Username, Pass: s.Password.Reveal()}.AsSha512Mechanism()
	case config.SASLAWSMSKIAM:
		return saslaws.ManagedStreamingIAM(func(ctx context.Context) (saslaws.Auth, error) {
			cfg, err := awsconfig.LoadDefaultConfig(ctx)
			if err != nil {
				return saslaws.Auth{}, err
			}
			var creds aws.Credentials
			if creds, err = cfg.Credentials.Retrieve(ctx); err != nil {
				return saslaws.Auth{}, err
			}
			return saslaws.Auth{AccessKey: creds.AccessKeyID, SecretKey: creds.SecretAccessKey, SessionToken: creds.SessionToken}, nil
		})
	}
	return plain.Auth{User: s.Username, Pass: s.Password.Reveal()}.AsMechanism()
}

// storeURLProblems are the problems of the object store URLs run opens, found
// by the parser that opens them: the control table's, and a table's as
// tables.path routes one (a placeholder may name the bucket). A field
// reported already is not checked again.
func storeURLProblems(c config.Config, reported []string) []string {
	check := func(field, url string) bool {
		return strings.Contains(url, "://") && !slices.ContainsFunc(reported, func(p string) bool { return strings.HasPrefix(p, field+": ") })
	}
	var bad []string
	if check("control.path", c.Control.Path) {
		if err := parseStoreURL(c.Control.Path); err != nil {
			bad = append(bad, "control.path: "+err.Error())
		}
	}
	if r, err := route.NewRouter(c.Tables.Path); err == nil && check("tables.path", c.Tables.Path) {
		const topic = "topic.database.schema.table"
		table, _ := r.Route(topic) // cannot fail: the topic names every part
		if err := parseStoreURL(table); err != nil {
			bad = append(bad, fmt.Sprintf("tables.path: %q, as the URL of table %s: %v", urlcred.Redact(c.Tables.Path), topic, err))
		}
	}
	return bad
}

// storeOpener opens a table path with the configured storage options and
// the credentials of the environment (runopts.StoreOpener).
func storeOpener(st config.Storage) func(context.Context, string) (deltalog.Store, error) {
	return runopts.StoreOpener(st, os.Getenv)
}

// newLogger builds the process logger from the log settings.
func newLogger(l config.Log, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(l.Level)) // validated: debug, info, warn, error
	opts := &slog.HandlerOptions{Level: level}
	if l.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// newController builds the control table's keeper from the configuration and the
// processor's options, which it shares the connection and routing of.
func newController(ctx context.Context, c config.Config, opts processor.Options, logger *slog.Logger, reg prometheus.Registerer) (*controller.Controller, error) {
	store, err := opts.OpenStore(ctx, c.Control.Path)
	if err != nil {
		return nil, fmt.Errorf("control.path: %w", err)
	}
	groups := map[string][]string{}
	for _, g := range c.Control.Groups {
		groups[g.Name] = g.Tables
	}
	co := controller.Options{
		Brokers: opts.Brokers, ClientOptions: opts.ClientOptions, Topics: c.Kafka.Topics, TopicRegex: c.Kafka.TopicRegex,
		TablePath: opts.TablePath, OpenStore: opts.OpenStore, Control: store, Groups: groups,
		TransactionTopic: c.Control.TransactionTopic, Decoder: opts.Decoder, Interval: time.Duration(c.Control.Interval), Logger: logger,
		Registerer: reg,
	}
	ctl, err := controller.New(co)
	if err != nil {
		return nil, fmt.Errorf("control table: %w", err)
	}
	return ctl, nil
}

// changeLogPath is where a table's change log lives: beside it (ADR 0031).
// historyPath is where the history table of the table src routes to lives
// (ADR 0046): template with {path} (the table's path), {topic}, {database},
// {schema} and {table}.
func historyPath(template string, src route.TableSource) string {
	return strings.NewReplacer("{path}", strings.TrimRight(src.Path, "/"), "{topic}", src.Topic,
		"{database}", src.Database, "{schema}", src.Schema, "{table}", src.Table).Replace(template)
}

func changeLogPath(table string) string { return strings.TrimRight(table, "/") + "_changes" }
