package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/cdc2delta/cdc2delta/config"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/registry"
	"github.com/cdc2delta/cdc2delta/processor"
	"github.com/cdc2delta/cdc2delta/processor/merge"
)

// quickstartPartitions is the partition count of the sample topics.
const quickstartPartitions = 3

func quickstartCommand() command {
	return command{
		name:    "quickstart",
		summary: "run the pipeline on an embedded broker, schema registry and sample SQL Server database",
		example: "cdc2delta quickstart                      # tables land in ./cdc2delta-quickstart/tables\n" +
			"cdc2delta quickstart --events 50000 --keep-running   # then inspect with kcat -b 127.0.0.1:19092 -L",
		flags: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			dir := fs.String("dir", "cdc2delta-quickstart", "folder for the broker's data, the registry and the tables")
			events := fs.Int("events", 5000, "change events to generate on a fresh start (inserts, updates, deletes)")
			kafkaPort := fs.Int("kafka-port", 19092, "localhost port of the embedded Kafka-compatible broker (0: any)")
			regPort := fs.Int("registry-port", 18081, "localhost port of the embedded schema registry (0: any)")
			keep := fs.Bool("keep-running", false, "keep broker, registry and processor running after catching up, until Ctrl-C")
			dv := fs.Bool("deletion-vectors", true, "new tables get deletion vectors (tables.defaults.deletion_vectors); false for tables DeltaTable.to_pandas() reads")
			names := fs.String("column-names", config.ColumnsMapped, "mapped or portable (tables.defaults.column_names): portable names [Unit Price] Unit_Price, without column mapping")
			return func(ctx context.Context, args []string) error {
				if len(args) > 0 {
					return usagef("unexpected arguments %q", args)
				}
				if *events < 0 {
					return usagef("--events must not be negative")
				}
				return quickstart(ctx, e, quickstartOptions{dir: *dir, events: *events, kafkaPort: *kafkaPort, regPort: *regPort, keep: *keep,
					deletionVectors: *dv, columnNames: *names})
			}
		},
	}
}

type quickstartOptions struct {
	dir       string
	events    int
	kafkaPort int
	regPort   int
	keep      bool
	// deletionVectors and columnNames are the tables' features.
	deletionVectors bool
	columnNames     string
}

func quickstart(ctx context.Context, e *env, o quickstartOptions) error {
	dir, err := filepath.Abs(o.dir)
	if err != nil {
		return err
	}
	reg, err := registry.New(registry.Dir(filepath.Join(dir, "registry")))
	if err != nil {
		return fmt.Errorf("schema registry: %w", err)
	}
	defer reg.Close()
	if err := reg.Start(ctx, fmt.Sprintf("127.0.0.1:%d", o.regPort)); err != nil {
		return fmt.Errorf("starting the schema registry: %w", err)
	}
	src, err := sr.NewClient(sr.URLs(reg.URL()))
	if err != nil {
		return err
	}
	// The sample connector propagates source column types and names
	// (column.propagate.source.type), so tables get comments and "Unit Price"
	// keeps its SQL Server name instead of the Avro-adjusted Unit_Price.
	genOpts := dbzgen.DefaultOptions()
	genOpts.PropagateSourceTypes = true
	gen := dbzgen.New(src, genOpts)
	var tables []*dbzgen.Table
	var topics []string
	for _, def := range dbzgen.SampleDatabase() {
		tb, err := gen.Table(def)
		if err != nil {
			return err
		}
		tables, topics = append(tables, tb), append(topics, tb.Topic())
	}
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(o.kafkaPort),
		kfake.DataDir(filepath.Join(dir, "kafka")), kfake.SeedTopics(quickstartPartitions, topics...))
	if err != nil {
		return fmt.Errorf("starting the embedded broker: %w", err)
	}
	defer cluster.Close()
	brokers := cluster.ListenAddrs()
	fmt.Fprintf(e.stdout, "broker:   %s (Kafka protocol; try kcat -b %s -L)\nregistry: %s\n", brokers[0], brokers[0], reg.URL())

	client, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return err
	}
	defer client.Close()
	adm := kadm.NewClient(client)
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return fmt.Errorf("listing offsets: %w", err)
	}
	if total(ends) == 0 && o.events > 0 {
		if err := produceSample(ctx, e, gen, tables, client, o.events); err != nil {
			return err
		}
		if ends, err = adm.ListEndOffsets(ctx, topics...); err != nil {
			return fmt.Errorf("listing offsets: %w", err)
		}
	} else {
		fmt.Fprintf(e.stdout, "topics already hold %d events (from an earlier run); not generating more\n", total(ends))
	}

	c := config.Default()
	c.Kafka.Brokers, c.Kafka.GroupID, c.Kafka.Topics = brokers, "cdc2delta-quickstart", topics
	c.SchemaRegistry.URL = reg.URL()
	c.Tables.Path = filepath.ToSlash(filepath.Join(dir, "tables")) + "/{database}/{schema}/{table}"
	c.Batch.MaxAge = config.Duration(200 * time.Millisecond)
	c.Metrics.Listen, c.Log.Level = "", "warn"
	c.Tables.Defaults.DeletionVectors, c.Tables.Defaults.ColumnNames = o.deletionVectors, o.columnNames
	if err := c.Validate(); err != nil {
		return err
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- runProcessor(runCtx, e, c) }()

	router, err := processor.NewRouter(c.Tables.Path)
	if err != nil {
		return err
	}
	paths := map[string]string{}
	for _, tp := range topics {
		if paths[tp], err = router.Route(tp); err != nil {
			return err
		}
	}
	want := total(ends)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		applied := appliedOffsets(ctx, paths, ends)
		fmt.Fprintf(e.stdout, "applied %d / %d events\n", applied, want)
		if applied >= want {
			break
		}
		select {
		case err := <-done:
			if err == nil {
				err = errors.New("processor stopped before catching up")
			}
			return err
		case <-ctx.Done():
			stop()
			return <-done
		case <-tick.C:
		}
	}
	printQuickstartEnd(ctx, e, tables, paths)
	if o.keep {
		fmt.Fprintln(e.stdout, "still running (broker, registry, processor); press Ctrl-C to stop")
		<-ctx.Done()
	}
	stop()
	return <-done
}

func total(ends kadm.ListedOffsets) int64 {
	var n int64
	ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
	return n
}

// produceSample produces n generated change events, keyed so each key keeps its order.
func produceSample(ctx context.Context, e *env, gen *dbzgen.Generator, tables []*dbzgen.Table, client *kgo.Client, n int) error {
	w, err := dbzgen.NewWorkload(dbzgen.WorkloadOptions{Seed: 1, Keys: 500, Snapshot: true}, tables...)
	if err != nil {
		return err
	}
	recs := make([]*kgo.Record, 0, 1000)
	flush := func() error {
		err := client.ProduceSync(ctx, recs...).FirstErr()
		recs = recs[:0]
		return err
	}
	for i := range n {
		ev := w.Next()
		key, value, err := gen.Encode(ctx, ev)
		if err != nil {
			return fmt.Errorf("encoding event %d: %w", i, err)
		}
		recs = append(recs, &kgo.Record{Topic: ev.Table.Topic(), Key: key, Value: value})
		if len(recs) == cap(recs) {
			if err := flush(); err != nil {
				return fmt.Errorf("producing: %w", err)
			}
		}
	}
	if err := flush(); err != nil {
		return fmt.Errorf("producing: %w", err)
	}
	fmt.Fprintf(e.stdout, "generated %d Debezium change events for %d tables (snapshot, inserts, updates, deletes)\n", n, len(tables))
	return nil
}

// appliedOffsets counts the records each table's txn says were applied, capped by the
// end offsets (tables that do not exist yet count zero).
func appliedOffsets(ctx context.Context, paths map[string]string, ends kadm.ListedOffsets) int64 {
	var n int64
	for topic, path := range paths {
		st, err := storeOpener(config.S3{})(ctx, path)
		if err != nil {
			continue
		}
		t, err := deltalog.Open(ctx, st)
		if err != nil {
			continue
		}
		snap, err := t.Snapshot(ctx)
		if err != nil {
			continue // not created yet
		}
		for _, o := range ends[topic] {
			if v, ok := snap.TxnVersion(merge.TopicPartition{Topic: topic, Partition: o.Partition}.AppID()); ok {
				n += min(v+1, o.Offset)
			}
		}
	}
	return n
}

func printQuickstartEnd(ctx context.Context, e *env, tables []*dbzgen.Table, paths map[string]string) {
	var b strings.Builder
	b.WriteString("\nDone. The Delta tables:\n")
	for _, tb := range tables {
		fmt.Fprintf(&b, "  %s.%s  %s\n", tb.Def().Schema, tb.Def().Name, paths[tb.Topic()])
	}
	b.WriteString(queryHints(ctx, paths[tables[len(tables)-1].Topic()]))
	_, _ = fmt.Fprint(e.stdout, b.String()) // stdout write errors have nowhere to go
}
