package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	saslaws "github.com/twmb/franz-go/pkg/sasl/aws"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/config"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/deltalog/s3store"
	"github.com/cdc2delta/cdc2delta/processor"
)

// processorOptions maps the configuration onto processor.Options. Settings the
// processor cannot yet apply per table are refused with a usage error rather than
// silently ignored.
func processorOptions(c config.Config, logger *slog.Logger) (processor.Options, error) {
	if err := checkPerTableSupport(c.Tables); err != nil {
		return processor.Options{}, err
	}
	k := c.Kafka
	clientOpts, err := kafkaOpts(k)
	if err != nil {
		return processor.Options{}, err
	}
	regOpts := codecs.RegistryOptions{
		URLs: []string{c.SchemaRegistry.URL}, User: c.SchemaRegistry.Username,
		Password: c.SchemaRegistry.Password.Reveal(), BearerToken: c.SchemaRegistry.BearerToken.Reveal(), Logger: logger,
	}
	if c.SchemaRegistry.TLS.On() {
		tc, err := tlsConfig(c.SchemaRegistry.TLS)
		if err != nil {
			return processor.Options{}, fmt.Errorf("schema_registry.tls: %w", err)
		}
		regOpts.TLS = tc
	}
	reg, err := codecs.NewRegistry(regOpts)
	if err != nil {
		return processor.Options{}, fmt.Errorf("schema registry: %w", err)
	}
	dec, err := codecs.NewDecoder(reg, codecs.Options{
		BinaryHandling: codecs.BinaryMode(c.Decoding.BinaryHandlingMode), KeyColumns: keyColumns(c.Tables), Logger: logger,
	})
	if err != nil {
		return processor.Options{}, fmt.Errorf("decoder: %w", err)
	}
	topics, regex := k.Topics, false
	if k.TopicRegex != "" {
		topics, regex = []string{k.TopicRegex}, true
	}
	d := c.Tables.Defaults
	opts := processor.Options{
		Brokers: k.Brokers, Group: k.GroupID, Topics: topics, TopicRegex: regex, InstanceID: k.InstanceID,
		ClientOptions: clientOpts, ResetOffset: k.Reset,
		TablePath: c.Tables.Path,
		OpenStore: storeOpener(c.Storage.S3),
		Sink: processor.SinkOptions{
			DeleteMode: processor.DeleteMode(d.DeleteMode), TombstoneRetention: time.Duration(d.TombstoneRetention),
			MergeMode: processor.MergeMode(d.MergeMode), EnableChangeDataFeed: d.ChangeDataFeed, Logger: logger,
		},
		Decoder: dec,
		Batch: processor.BatchLimits{
			Records: c.Batch.MaxRecords, Bytes: int64(c.Batch.MaxBytes), Age: time.Duration(c.Batch.MaxAge),
		},
		MaxBufferedBytes: int64(c.Memory.MaxBufferedBytes),
		BadInput:         processor.Policy(d.BadInput),
		DeadLetterTopic:  k.DLQTopic,
	}
	router, err := processor.NewRouter(opts.TablePath)
	if err != nil {
		return processor.Options{}, usagef("tables.path: %v", err)
	}
	for i, o := range c.Tables.Overrides {
		if o.BadInput == nil {
			continue
		}
		path, err := router.Route(o.Topic)
		if err != nil {
			return processor.Options{}, usagef("tables.overrides[%d].topic: %v", i, err)
		}
		if opts.TablePolicies == nil {
			opts.TablePolicies = map[string]processor.Policy{}
		}
		opts.TablePolicies[path] = processor.Policy(*o.BadInput)
	}
	return opts, nil
}

// kafkaOpts are the client options for the connection settings (TLS, SASL).
func kafkaOpts(k config.Kafka) ([]kgo.Opt, error) {
	var opts []kgo.Opt
	if k.TLS.On() {
		tc, err := tlsConfig(k.TLS)
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

// checkPerTableSupport refuses overrides the processor cannot apply yet: its sink
// settings are one template for every table. bad_input is applied per table path (so it
// must be matched by topic, which routes to a path) and key_columns through the decoder.
func checkPerTableSupport(t config.Tables) error {
	var bad []string
	if len(t.Defaults.PartitionBy) > 0 {
		bad = append(bad, "tables.defaults.partition_by")
	}
	if len(t.Defaults.KeyColumns) > 0 {
		bad = append(bad, "tables.defaults.key_columns (set key_columns per table in overrides)")
	}
	for i, o := range t.Overrides {
		p := fmt.Sprintf("tables.overrides[%d].", i)
		for name, set := range map[string]bool{
			"delete_mode": o.DeleteMode != nil, "tombstone_retention": o.TombstoneRetention != nil,
			"merge_mode": o.MergeMode != nil, "change_data_feed": o.ChangeDataFeed != nil,
			"partition_by": o.PartitionBy != nil, "null_key": o.NullKey != nil,
		} {
			if set {
				bad = append(bad, p+name)
			}
		}
		if o.BadInput != nil && o.Topic == "" {
			bad = append(bad, p+"bad_input (match the table by topic)")
		}
	}
	if len(bad) > 0 {
		return usagef("not yet supported by `run` (the processor applies one setting to every table): %s",
			strings.Join(bad, ", "))
	}
	return nil
}

// keyColumns maps overrides with key_columns to the decoder's "schema.table" or
// "database.schema.table" keys; a topic names its table by its last three parts.
func keyColumns(t config.Tables) map[string][]string {
	out := map[string][]string{}
	for _, o := range t.Overrides {
		if len(o.KeyColumns) == 0 {
			continue
		}
		name := o.Name
		if o.Topic != "" {
			parts := strings.Split(o.Topic, ".")
			name = strings.Join(parts[max(0, len(parts)-3):], ".")
		}
		out[name] = o.KeyColumns
	}
	return out
}

func tlsConfig(t config.TLS) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: t.InsecureSkipVerify} //nolint:gosec // the user asked for it
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s holds no PEM certificate", t.CAFile)
		}
		tc.RootCAs = pool
	}
	if t.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, err
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
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

// storeOpener opens a table path: s3:// URLs with the configured S3 options, anything
// else as a local directory.
func storeOpener(s3 config.S3) func(context.Context, string) (deltalog.Store, error) {
	return func(ctx context.Context, p string) (deltalog.Store, error) {
		if strings.Contains(p, "://") {
			o, err := s3store.ParseURL(p)
			if err != nil {
				return nil, err
			}
			o.Endpoint, o.Region, o.UsePathStyle = s3.Endpoint, s3.Region, s3.PathStyle
			return s3store.New(ctx, o)
		}
		return localstore.New(localstore.Options{Dir: p})
	}
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
