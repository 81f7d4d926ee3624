package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
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
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/route"
)

// quickstartPartitions is the partition count of the sample topics.
const quickstartPartitions = 3

// quickstartRounds is how many rounds the sample events are produced in, each applied
// before the next, so every table ends with several versions to look back at, restore
// to and optimize.
const quickstartRounds = 5

// quickstartKeys is the primary keys per sample table: enough that orders (about
// 100 bytes a row, 2 MiB) outgrows the default tail file size (1 MiB). A file that
// large is never folded into, so updates leave deletion vectors for describe and
// history to show, and new rows go to another file: the run ends with a few files
// and vectors for optimize, below the debt (10) at which maintenance compacts.
const quickstartKeys = 20_000

// quickstartGroup is the consumer group of the quickstart's processor.
const quickstartGroup = "cdc2delta-quickstart"

// quickstartControlGroup is the control table's group of the sample tables.
const quickstartControlGroup = "sales"

func quickstartCommand() command {
	return command{
		name:    "quickstart",
		summary: "run the pipeline on an embedded broker, schema registry and sample SQL Server database",
		example: "cdc2delta quickstart                      # tables land in ./cdc2delta-quickstart/tables\n" +
			"cdc2delta quickstart --keep-running       # then, in another terminal: cdc2delta offsets --config cdc2delta-quickstart/cdc2delta.yaml",
		flags: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			dir := fs.String("dir", defaultQuickstartDir, "folder for the broker's data, the registry, the tables and cdc2delta.yaml; "+
				"an object store URL (s3://, abfss://, az://) puts the tables there and the rest in ./"+defaultQuickstartDir)
			events := fs.Int("events", 50_000, "change events to generate on a fresh start (snapshot, inserts, updates, deletes), "+
				"in "+strconv.Itoa(quickstartRounds)+" rounds; the snapshot is the first "+strconv.Itoa(len(dbzgen.SampleDatabase())*quickstartKeys))
			kafkaPort := fs.Int("kafka-port", defaultKafkaPort, "localhost port of the embedded Kafka-compatible broker (0: any free port)")
			regPort := fs.Int("registry-port", defaultRegistryPort, "localhost port of the embedded schema registry (0: any free port)")
			keep := fs.Bool("keep-running", false, "after catching up, stop the processor but keep the broker and registry running "+
				"until Ctrl-C, for offsets, replay and run --config DIR/cdc2delta.yaml")
			dv := fs.Bool("deletion-vectors", true, "new tables get deletion vectors (tables.defaults.deletion_vectors); false for tables DeltaTable.to_pandas() reads")
			names := fs.String("column-names", config.ColumnsMapped, "mapped or portable (tables.defaults.column_names): portable names [Unit Price] Unit_Price, without column mapping")
			return func(ctx context.Context, args []string) error {
				if len(args) > 0 {
					return usagef("unexpected arguments %q", args)
				}
				if *events < 0 {
					return usagef("--events must not be negative")
				}
				if *names != config.ColumnsMapped && *names != config.ColumnsPortable {
					return usagef("--column-names %q is not %s or %s", *names, config.ColumnsMapped, config.ColumnsPortable)
				}
				return quickstart(ctx, e, quickstartOptions{dir: *dir, events: *events, kafkaPort: *kafkaPort, regPort: *regPort, keep: *keep,
					deletionVectors: *dv, columnNames: *names})
			}
		},
	}
}

// The quickstart's defaults.
const (
	defaultQuickstartDir = "cdc2delta-quickstart"
	defaultKafkaPort     = 19092
	defaultRegistryPort  = 18081
)

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

// portInUse says what to do when a port the quickstart listens on is taken.
func portInUse(err error, port int, what string) error {
	if !errors.Is(err, syscall.EADDRINUSE) || port == 0 {
		return fmt.Errorf("starting the %s: %w", what, err)
	}
	return fmt.Errorf("starting the %s: port %d is in use (another quickstart?): pass --kafka-port 0 --registry-port 0 "+
		"for free ports, or stop the other one", what, port)
}

func quickstart(ctx context.Context, e *env, o quickstartOptions) error {
	dir, tablesRoot, err := quickstartDirs(o.dir)
	if err != nil {
		return err
	}
	reg, err := registry.New(registry.Dir(filepath.Join(dir, "registry")))
	if err != nil {
		return fmt.Errorf("schema registry: %w", err)
	}
	defer reg.Close()
	if err := reg.Start(ctx, fmt.Sprintf("127.0.0.1:%d", o.regPort)); err != nil {
		return portInUse(err, o.regPort, "schema registry")
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
		return portInUse(err, o.kafkaPort, "embedded broker")
	}
	defer cluster.Close()
	brokers := cluster.ListenAddrs()
	// The processor's metrics on a free port, bound here so the configuration names it.
	metricsLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("metrics listener: %w", err)
	}
	defer metricsLn.Close() // already closed when the processor served it
	metricsURL := "http://" + metricsLn.Addr().String()
	fmt.Fprintf(e.stdout, "broker:   %s (Kafka protocol; try kcat -b %s -L)\nregistry: %s\nmetrics:  %s/metrics and /readyz while the processor runs\n",
		brokers[0], brokers[0], reg.URL(), metricsURL)

	// The processor runs with the configuration file it leaves for the user, so the
	// file is known to work.
	cfgPath := filepath.Join(dir, "cdc2delta.yaml")
	if err := os.WriteFile(cfgPath, quickstartConfig(brokers[0], reg.URL(), metricsLn.Addr().String(), tables, tablesRoot, o), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", cfgPath, err)
	}
	c, err := config.Load(cfgPath)
	if err != nil {
		return err
	}
	c.Log.Level = "warn" // the quickstart prints its own progress

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

	router, err := route.NewRouter(c.Tables.Path)
	if err != nil {
		return err
	}
	paths := map[string]string{}
	for _, tp := range topics {
		if paths[tp], err = router.Route(tp); err != nil {
			return err
		}
	}

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	finished := make(chan struct{}) // closed when the processor has stopped, runErr set
	var runErr error
	var proc atomic.Pointer[processor.Processor]
	go func() {
		defer close(finished)
		runErr = runProcessor(runCtx, e, c, metricsLn, proc.Store)
	}()
	// stopped lists the tables that stopped: they apply nothing more until a
	// restart, so waiting for them would never end.
	stopped := func() []*processor.TableError {
		if p := proc.Load(); p != nil {
			return p.Status().Failed
		}
		return nil
	}
	stopProcessor := func() error {
		stop()
		<-finished
		return runErr
	}
	// catchUp waits for the processor to apply everything up to ends; errInterrupted
	// when Ctrl-C came first (the processor stopped cleanly).
	catchUp := func(ends kadm.ListedOffsets) error {
		err := waitApplied(ctx, e, paths, ends, finished, &runErr, stopped)
		if ctx.Err() != nil {
			if err := stopProcessor(); err != nil {
				return err
			}
			return errInterrupted
		}
		return err
	}

	if fresh := total(ends) == 0 && o.events > 0; fresh {
		w, err := dbzgen.NewWorkload(dbzgen.WorkloadOptions{Seed: 1, Keys: quickstartKeys, Snapshot: true}, tables...)
		if err != nil {
			return err
		}
		rounds := min(quickstartRounds, o.events)
		for i := range rounds {
			n := o.events/rounds + boolInt(i < o.events%rounds)
			err := produceSample(ctx, gen, w, client, n)
			if err == nil {
				ends, err = adm.ListEndOffsets(ctx, topics...)
			}
			if ctx.Err() != nil { // Ctrl-C
				return stopProcessor()
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "round %d/%d: produced %d change events\n", i+1, rounds, n)
			if err := catchUp(ends); err != nil {
				return ignoreInterrupt(err)
			}
		}
		fmt.Fprintf(e.stdout, "generated %s for %s (snapshot, inserts, updates, deletes)\n", plural(o.events, "Debezium change event"), plural(len(tables), "table"))
	} else {
		if total(ends) > 0 {
			fmt.Fprintf(e.stdout, "topics already hold %d events (from an earlier run); not generating more\n", total(ends))
		}
		if err := catchUp(ends); err != nil {
			return ignoreInterrupt(err)
		}
	}
	if err := waitControl(ctx, c.Control.Path, paths, finished); err != nil {
		if ctx.Err() != nil { // Ctrl-C
			return stopProcessor()
		}
		return errors.Join(err, stopProcessor())
	}
	// Stop the processor before printing: it commits the group's offsets as it leaves,
	// and with --keep-running the group must be empty for replay.
	if err := stopProcessor(); err != nil {
		return err
	}
	printQuickstartEnd(ctx, e, o, tables, paths, cfgPath)
	if o.keep {
		<-ctx.Done()
	}
	return nil
}

// errInterrupted ends a quickstart stopped by Ctrl-C before it caught up: not a failure.
var errInterrupted = errors.New("interrupted")

func ignoreInterrupt(err error) error {
	if errors.Is(err, errInterrupted) {
		return nil
	}
	return err
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// quickstartConfig is the configuration of the running quickstart, written to
// DIR/cdc2delta.yaml for the commands that take --config.
func quickstartConfig(broker, registryURL, metricsAddr string, tables []*dbzgen.Table, tablesRoot string, o quickstartOptions) []byte {
	q := func(s string) string {
		b, _ := json.Marshal(s) // a JSON string is a YAML double-quoted scalar
		return string(b)
	}
	var topics, names []string
	for _, tb := range tables {
		d := tb.Def()
		topics, names = append(topics, q(tb.Topic())), append(names, q(d.Database+"."+d.Schema+"."+d.Name))
	}
	tablesPath := tablesRoot + "/{database}/{schema}/{table}"
	return fmt.Appendf(nil, `# The configuration of the cdc2delta quickstart in this folder, rewritten on each start.
# Its broker and schema registry run inside the quickstart process, so the commands
# that connect to them need it running: start it with --keep-running, then
#   cdc2delta offsets --config THIS_FILE
#   cdc2delta replay --config THIS_FILE --to-earliest
#   cdc2delta run --config THIS_FILE
# Every field and its default: config/example.yaml and docs/CONFIG.md.
kafka:
  brokers: [%s]
  group_id: %s
  topics: [%s]
schema_registry:
  url: %s
tables:
  path: %s
  defaults:
    deletion_vectors: %t   # false (with column_names: portable) for DeltaTable(path).to_pandas()
    column_names: %s
    change_log: true   # every change event applied, in <table path>_changes
batch:
  max_age: 200ms
  min_records: 1   # commit every batch at max_age; the default (100) lets a trickle wait up to max_delay
control:
  path: %s
  interval: 1s
  groups:
    - {name: %s, tables: [%s]}
metrics:
  listen: %s   # /metrics, /healthz and /readyz while the processor runs
log:
  level: info
`, q(broker), q(quickstartGroup), strings.Join(topics, ", "), q(registryURL), q(tablesPath), o.deletionVectors, o.columnNames,
		q(tablesRoot+"/_control"), quickstartControlGroup, strings.Join(names, ", "), q(metricsAddr))
}

// waitApplied waits until the tables' txn positions reach ends, printing progress, or
// the processor stops (finished closes, *runErr set), a table stops, or ctx ends.
func waitApplied(ctx context.Context, e *env, paths map[string]string, ends kadm.ListedOffsets, finished <-chan struct{}, runErr *error,
	stopped func() []*processor.TableError) error {
	want := total(ends)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	lastPrint := time.Now()
	for {
		applied := appliedOffsets(ctx, paths, ends)
		if applied >= want || time.Since(lastPrint) >= 2*time.Second {
			fmt.Fprintf(e.stdout, "applied %d / %d events\n", applied, want)
			lastPrint = time.Now()
		}
		if applied >= want {
			return nil
		}
		if failed := stopped(); len(failed) > 0 {
			errs := make([]error, len(failed))
			for i, f := range failed {
				errs[i] = f
			}
			return fmt.Errorf("%s stopped before applying every event: %w", plural(len(failed), "table"), errors.Join(errs...))
		}
		select {
		case <-finished:
			if *runErr == nil {
				return errors.New("processor stopped before catching up")
			}
			return *runErr
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

func total(ends kadm.ListedOffsets) int64 {
	var n int64
	ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
	return n
}

// produceSample produces the workload's next n change events, keyed so each key keeps
// its order.
func produceSample(ctx context.Context, gen *dbzgen.Generator, w *dbzgen.Workload, client *kgo.Client, n int) error {
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
	return nil
}

// appliedOffsets counts the records each table's txn says were applied, capped by the
// end offsets (tables that do not exist yet count zero).
func appliedOffsets(ctx context.Context, paths map[string]string, ends kadm.ListedOffsets) int64 {
	var n int64
	for topic, path := range paths {
		st, err := storeOpener(config.Storage{})(ctx, path)
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
			if v, ok := snap.TxnVersion(cdctable.TopicPartition{Topic: topic, Partition: o.Partition}.AppID()); ok {
				n += min(v+1, o.Offset)
			}
		}
	}
	return n
}

// printQuickstartEnd prints where the tables and the configuration are, and the next
// commands, each runnable as printed from the current directory.
func printQuickstartEnd(ctx context.Context, e *env, o quickstartOptions, tables []*dbzgen.Table, paths map[string]string, cfgPath string) {
	self := e.selfCmd()
	var b strings.Builder
	b.WriteString("\nDone. The Delta tables:\n")
	for _, tb := range tables {
		fmt.Fprintf(&b, "  %s.%s  %s\n", tb.Def().Schema, tb.Def().Name, paths[tb.Topic()])
	}
	last := tables[len(tables)-1]
	p := paths[last.Topic()]
	t := shellQuote(p)
	fmt.Fprintf(&b, "\nConsumer group: %s (kafka-consumer-groups and `offsets` show it)\n", quickstartGroup)
	fmt.Fprintf(&b, "Configuration:  %s (this quickstart's broker, registry and tables, for --config)\n", cfgPath)
	version := int64(-1)
	if st, err := storeOpener(config.Storage{})(ctx, p); err == nil {
		if tbl, err := deltalog.Open(ctx, st); err == nil {
			if snap, err := tbl.Snapshot(ctx); err == nil {
				version = snap.Version()
			}
		}
	}
	fmt.Fprintf(&b, "\nLook at a table (%s.%s has %s):\n", last.Def().Schema, last.Def().Name, plural(int(version+1), "version"))
	fmt.Fprintf(&b, "  %s show --limit 10 %s\n", self, t)
	fmt.Fprintf(&b, "  %s describe %s\n", self, t)
	fmt.Fprintf(&b, "  %s history %s\n", self, t)
	fmt.Fprintf(&b, "  %s show --version 0 --limit 10 %s\n", self, t)
	b.WriteString("Its change log, every change event applied (tables.defaults.change_log):\n")
	fmt.Fprintf(&b, "  %s show --limit 10 %s\n", self, shellQuote(changeLogPath(p)))
	b.WriteString("The versions to read together, a consistent cut of the tables (the control table):\n")
	fmt.Fprintf(&b, "  %s status --config %s --group %s\n", self, shellQuote(cfgPath), quickstartControlGroup)
	b.WriteString("Maintain it:\n")
	fmt.Fprintf(&b, "  %s optimize %s   # packs small files, purges deletion vectors\n", self, t)
	fmt.Fprintf(&b, "  %s vacuum --dry-run %s\n", self, t)
	if version >= 1 {
		fmt.Fprintf(&b, "  %s restore --version 1 %s   # the next quickstart run re-applies what came after\n", self, t)
	}
	b.WriteString("Read it with other engines:\n")
	b.WriteString(readerHints(ctx, p))

	c := shellQuote(cfgPath)
	kafkaSide := fmt.Sprintf("  %s offsets --config %s\n  %s replay --config %s --to-earliest\n"+
		"  %s run --config %s   # Ctrl-C stops it; it replays from where replay set the group, serving metrics.listen\n", self, c, self, c, self, c)
	if o.keep {
		b.WriteString("\nThe broker and the registry keep running until Ctrl-C; this run's processor has left the group, " +
			"so in another terminal:\n" + kafkaSide)
	} else {
		again := self + " quickstart --keep-running"
		if o.dir != defaultQuickstartDir {
			again += " --dir " + shellQuote(o.dir)
		}
		if o.kafkaPort != defaultKafkaPort {
			again += " --kafka-port " + strconv.Itoa(o.kafkaPort)
		}
		if o.regPort != defaultRegistryPort {
			again += " --registry-port " + strconv.Itoa(o.regPort)
		}
		fmt.Fprintf(&b, "\nThe consumer group's commands need the broker, which stopped with this run. Keep it running with\n"+
			"  %s\nthen, in another terminal:\n%s", again, kafkaSide)
	}
	_, _ = fmt.Fprint(e.stdout, b.String()) // stdout write errors have nowhere to go
}
