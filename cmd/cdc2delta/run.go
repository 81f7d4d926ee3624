package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/cdc2delta/cdc2delta/config"
	"github.com/cdc2delta/cdc2delta/processor"
)

// configFlags are the config file and the flags that override its common fields.
type configFlags struct {
	path, brokers, group, tablesPath, logLevel, metricsListen string
}

// override is a flag that replaces a field of the file.
type override int

const (
	overrideBrokers override = iota
	overrideGroup
	overrideTablesPath
	overrideLogLevel
	overrideMetricsListen
)

// allOverrides are those of run, and of validate, which checks what run would use.
var allOverrides = []override{overrideBrokers, overrideGroup, overrideTablesPath, overrideLogLevel, overrideMetricsListen}

// addConfigFlags adds --config and the overrides of the fields the command uses,
// so that its help lists no flag that would change nothing.
func addConfigFlags(fs *flag.FlagSet, overrides ...override) *configFlags {
	cf := &configFlags{}
	fs.StringVar(&cf.path, "config", "", "configuration file (YAML; see config/example.yaml). Required")
	for _, o := range overrides {
		switch o {
		case overrideBrokers:
			fs.StringVar(&cf.brokers, "brokers", "", "override kafka.brokers (comma-separated host:port)")
		case overrideGroup:
			fs.StringVar(&cf.group, "group-id", "", "override kafka.group_id")
		case overrideTablesPath:
			fs.StringVar(&cf.tablesPath, "tables-path", "", "override tables.path")
		case overrideLogLevel:
			fs.StringVar(&cf.logLevel, "log-level", "", "override log.level")
		case overrideMetricsListen:
			fs.StringVar(&cf.metricsListen, "metrics-listen", "", "override metrics.listen")
		}
	}
	return cf
}

// load reads the file, expands ${ENV} from lookup, applies the flag overrides and
// validates; every problem is a usage error (exit 2) naming the file, and all of them
// are reported at once: those of reading the file, of its values, of the table
// settings run cannot apply and of the store URLs it cannot open. `validate` and
// `run` both check here, so run refuses no configuration validate accepts.
func (cf *configFlags) load(args []string, lookup func(string) (string, bool)) (config.Config, error) {
	if cf.path == "" {
		return config.Config{}, usagef("--config FILE is required")
	}
	if len(args) > 0 {
		return config.Config{}, usagef("unexpected arguments %q", args)
	}
	data, err := os.ReadFile(cf.path)
	if err != nil {
		return config.Config{}, usagef("reading config: %v", err)
	}
	c, err := config.Check(data, lookup, cf.override)
	var problems []string
	if err != nil {
		problems = strings.Split(err.Error(), "\n")
	}
	var se *config.SyntaxError
	if !errors.As(err, &se) || se.Path != "" { // the file was read: check what run builds from it too
		problems = append(problems, tableSettingProblems(c)...)
		problems = append(problems, storeURLProblems(c, problems)...)
	}
	switch len(problems) {
	case 0:
		return c, nil
	case 1:
		return config.Config{}, usagef("%s: %s", cf.path, problems[0])
	}
	return config.Config{}, usagef("%s: %d problems:\n  %s", cf.path, len(problems), strings.Join(problems, "\n  "))
}

// override applies the flags that override the file.
func (cf *configFlags) override(c *config.Config) {
	if cf.brokers != "" {
		c.Kafka.Brokers = strings.Split(cf.brokers, ",")
	}
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&c.Kafka.GroupID, cf.group)
	set(&c.Tables.Path, cf.tablesPath)
	set(&c.Log.Level, cf.logLevel)
	set(&c.Metrics.Listen, cf.metricsListen)
}

func validateCommand() command {
	return command{
		name:    "validate",
		summary: "check a configuration file and report every problem at once",
		example: "cdc2delta validate --config cdc2delta.yaml   # ${VAR} references need their variables set",
		flags: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			cf := addConfigFlags(fs, allOverrides...)
			return func(ctx context.Context, args []string) error {
				if _, err := cf.load(args, e.lookup); err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "%s is valid\n", cf.path)
				return nil
			}
		},
	}
}

func runCommand() command {
	return command{
		name:    "run",
		summary: "run the pipeline: consume the topics and MERGE them into Delta tables",
		example: "cdc2delta run --config cdc2delta.yaml\n" +
			"KAFKA_PASSWORD=... cdc2delta run --config cdc2delta.yaml --group-id cdc2delta-blue --log-level debug",
		flags: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			cf := addConfigFlags(fs, allOverrides...)
			return func(ctx context.Context, args []string) error {
				c, err := cf.load(args, e.lookup)
				if err != nil {
					return err
				}
				return runProcessor(ctx, e, c, nil, nil)
			}
		},
	}
}

// runProcessor runs the pipeline of c until ctx ends (SIGINT/SIGTERM) or
// the processor fails. metricsLn, when not nil, is metrics.listen already
// bound: the quickstart binds a free port before it writes it into the
// configuration. started, if set, is given the processor once it exists
// (the quickstart watches its tables).
func runProcessor(ctx context.Context, e *env, c config.Config, metricsLn net.Listener, started func(*processor.Processor)) error {
	logger := newLogger(c.Log, e.stderr)
	opts, err := processorOptions(c, logger)
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	lanes, err := newRegistrars(ctx, c, logger, reg)
	if err != nil {
		return err
	}
	if len(lanes) > 0 {
		// Registration runs beside the pipeline and never holds it, one
		// lane per catalog (ADR 0047).
		opts.CatalogSource = catalogRoute(c, lanes)
		rctx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		for _, l := range lanes {
			opts.Catalogs = append(opts.Catalogs, l.r)
			wg.Go(func() { l.r.Run(rctx) })
			if l.k.ControlName != "" && c.Control.Path != "" {
				wg.Go(func() { registerControl(rctx, c, l.k.Catalog, l.r, logger) })
			}
			logger.Info("registering tables", "catalog", l.k.Name, "type", l.k.Type, "name", l.k.Catalog.Name)
		}
		defer func() {
			stop()
			wg.Wait()
		}()
	}
	if c.Control.Path != "" {
		ctl, err := newController(ctx, c, opts, logger, reg)
		if err != nil {
			return err
		}
		defer ctl.Close()
		// Its failures only lag the control table; one it cannot recover
		// from (a transaction topic it refuses) shows on /readyz.
		opts.Problems = ctl.Problems
		cctx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() { _ = ctl.Run(cctx) })
		defer func() {
			stop()
			wg.Wait()
		}()
		logger.Info("keeping the control table", "path", c.Control.Path, "transaction_topic", c.Control.TransactionTopic)
	}
	p, err := processor.New(opts, processor.WithLogger(logger), processor.WithRegisterer(reg))
	if err != nil {
		if errors.Is(err, processor.ErrOptions) {
			return usagef("%v", err)
		}
		return err
	}
	defer p.Close()
	if started != nil {
		started(p)
	}
	if c.Metrics.Listen != "" {
		ln, err := metricsLn, error(nil)
		if ln == nil {
			ln, err = net.Listen("tcp", c.Metrics.Listen)
		}
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("metrics listener: %s is in use (another cdc2delta, or the compose stack's container on 9464?): "+
				"set metrics.listen or --metrics-listen to a free port, or to \"\" for none", c.Metrics.Listen)
		}
		if err != nil {
			return fmt.Errorf("metrics listener: %w", err)
		}
		srv := &http.Server{Handler: p.Handler(reg), ReadHeaderTimeout: 5 * time.Second}
		go func() {
			// ErrServerClosed after Shutdown is the normal end.
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				logger.Error("metrics listener stopped", "err", err)
			}
		}()
		defer func() {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx) // best effort at exit
		}()
		logger.Info("serving /metrics, /healthz and /readyz", "addr", ln.Addr().String())
	}
	logger.Info("starting", "brokers", c.Kafka.Brokers, "group", c.Kafka.GroupID, "tables", c.Tables.Path)
	if err := p.Run(ctx); err != nil {
		if errors.Is(err, processor.ErrKafkaAccess) {
			return fmt.Errorf("%w (check kafka.sasl, kafka.tls and the user's ACLs)", err)
		}
		return fmt.Errorf("processor: %w", err)
	}
	logger.Info("stopped")
	return nil
}
