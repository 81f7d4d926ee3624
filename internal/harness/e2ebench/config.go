package e2ebench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/processor"
)

// ErrConfig is wrapped by the errors Run returns for an invalid Config.
var ErrConfig = errors.New("e2ebench: invalid config")

// MaxTables is how many distinct source tables the benchmark can use.
const MaxTables = 3

// Config shapes one benchmark run. Brokers is required.
type Config struct {
	// Brokers are the Kafka bootstrap addresses.
	Brokers []string
	// Prefix names the topics (Debezium's topic.prefix) and the group;
	// default "e2ebench<unix nanos>", so runs never share topics.
	Prefix string
	// Tables is the number of source tables, 1 to MaxTables (default 3).
	Tables int
	// Events is the backlog produced before the timed catch-up (default
	// 300,000), over all tables.
	Events int
	// Partitions per topic (default 6).
	Partitions int
	// Keys is the number of primary keys per table (default 20,000); the
	// workload starts with their snapshot.
	Keys int
	// Redeliver is the share of duplicate and out-of-order re-deliveries
	// (default 0.01; negative: none).
	Redeliver float64
	// Root is where the tables land: a directory, or with OpenStore any
	// location OpenStore opens (an object store URL). Empty: a temporary
	// directory, removed at the end.
	Root string
	// OpenStore opens the table at a path under Root, as the product's
	// storage configuration does (runopts.StoreOpener); nil: local
	// directories, synced only with Fsync.
	OpenStore func(ctx context.Context, path string) (deltalog.Store, error)
	// Fsync syncs table files as production does; the default skips it,
	// as the other benchmarks do.
	Fsync bool
	// Batch bounds the micro-batches (zero: the processor's defaults).
	Batch processor.BatchLimits
	// Maintenance is the tables' upkeep (zero: the processor's, where a
	// zero TailFileSize means off, unlike the configuration's 1 MiB).
	Maintenance processor.Maintenance
	// Profile takes a CPU profile of the catch-up and reports CPU shares.
	Profile bool
	// ProfilePath, when set with Profile, receives the raw CPU profile
	// (for go tool pprof).
	ProfilePath string
	// HeapProfilePath, when set, receives a heap profile taken when the
	// catch-up ends (its alloc_space also counts the untimed producing).
	HeapProfilePath string
	// LiveRate is the events/s of the latency phase (default 2,000; negative:
	// no latency phase) and LiveDuration its length (default 10s).
	LiveRate     int
	LiveDuration time.Duration
	// CatchUpTimeout bounds the catch-up (default 10 minutes).
	CatchUpTimeout time.Duration
	// KeepTopics leaves the topics on the broker (default: deleted).
	KeepTopics bool
	// ChangeLog keeps every table's change log (ADR 0031) beside it, at
	// the table's path + "_changes", as change_log: true does.
	ChangeLog bool
}

func (c Config) withDefaults() Config {
	if c.Prefix == "" {
		c.Prefix = fmt.Sprintf("e2ebench%d", time.Now().UnixNano())
	}
	if c.Tables == 0 {
		c.Tables = MaxTables
	}
	if c.Events == 0 {
		c.Events = 300_000
	}
	if c.Partitions == 0 {
		c.Partitions = 6
	}
	if c.Keys == 0 {
		c.Keys = 20_000
	}
	if c.Redeliver == 0 {
		c.Redeliver = 0.01
	}
	c.Redeliver = max(c.Redeliver, 0)
	if c.LiveRate == 0 {
		c.LiveRate = 2000
	}
	if c.LiveDuration == 0 {
		c.LiveDuration = 10 * time.Second
	}
	if c.CatchUpTimeout == 0 {
		c.CatchUpTimeout = 10 * time.Minute
	}
	return c
}

func (c Config) validate() error {
	var errs []error
	if len(c.Brokers) == 0 {
		errs = append(errs, errors.New("brokers: must not be empty"))
	}
	if c.Tables < 1 || c.Tables > MaxTables {
		errs = append(errs, fmt.Errorf("tables: %d is not in 1..%d", c.Tables, MaxTables))
	}
	if c.Events < 1 || c.Partitions < 1 || c.Keys < 1 {
		errs = append(errs, fmt.Errorf("events, partitions, keys: %d, %d, %d must be positive", c.Events, c.Partitions, c.Keys))
	}
	if c.OpenStore != nil && c.Root == "" {
		errs = append(errs, errors.New("root: must be set with OpenStore"))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrConfig, errors.Join(errs...))
	}
	return nil
}
