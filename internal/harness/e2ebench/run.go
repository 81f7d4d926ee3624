package e2ebench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/processor"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/route"
)

// ErrCatchUp is returned when the processor does not catch up in time.
var ErrCatchUp = errors.New("e2ebench: processor did not catch up")

// Run produces cfg.Events events (untimed), consumes them with a fresh
// group into fresh tables and measures the catch-up; then, unless
// cfg.LiveRate is negative, it produces at LiveRate for LiveDuration and
// measures latency. It returns what it measured.
func Run(ctx context.Context, cfg Config) (res Result, err error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return res, err
	}
	res.Config = ResultConfig{Tables: cfg.Tables, Partitions: cfg.Partitions, Keys: cfg.Keys, Redeliver: cfg.Redeliver,
		Fsync: cfg.Fsync, BatchRecs: cfg.Batch.Records, LiveRate: max(cfg.LiveRate, 0)}
	res.GOMAXPROCS, res.NumCPU = runtime.GOMAXPROCS(0), runtime.NumCPU()
	root := cfg.Root
	if root == "" {
		if root, err = os.MkdirTemp("", "e2ebench"); err != nil {
			return res, fmt.Errorf("creating table root: %w", err)
		}
		defer os.RemoveAll(root)
	}

	src, err := newSource(ctx, cfg)
	if err != nil {
		return res, err
	}
	defer src.close()
	if err := src.createTopics(ctx, cfg.Partitions); err != nil {
		return res, err
	}
	if !cfg.KeepTopics {
		defer func() {
			if derr := src.deleteTopics(context.WithoutCancel(ctx)); err == nil {
				err = derr
			}
		}()
	}
	produceStart := time.Now()
	if err := src.produceBacklog(ctx, cfg.Events); err != nil {
		return res, fmt.Errorf("producing the backlog: %w", err)
	}
	res.ProduceSeconds = time.Since(produceStart).Seconds()
	if cfg.LiveRate < 0 {
		// No live phase needs the workload's model of every row: drop it,
		// so that the catch-up's GC marks only the processor's heap.
		src.w = nil
	}
	ends, err := src.endOffsets(ctx)
	if err != nil {
		return res, err
	}
	for _, end := range ends {
		res.Events += end
	}

	r, err := startProcessor(ctx, cfg, src, root)
	if err != nil {
		return res, err
	}
	defer func() {
		if cerr := r.close(); err == nil {
			err = cerr
		}
	}()
	if err := measureCatchUp(ctx, cfg, src, r, ends, &res); err != nil {
		return res, err
	}
	if res.CommitsByReason, err = r.commitsByReason(); err != nil {
		return res, err
	}
	tl := timelines{}
	if res.Commits, err = tl.readAll(ctx, r, ends); err != nil {
		return res, err
	}
	end, err := tl.reached(ends)
	if err != nil {
		return res, err
	}
	res.CatchUpSeconds = end.Sub(r.joined).Seconds()
	if res.CatchUpSeconds <= 0 {
		return res, fmt.Errorf("%w: the last commit (%v) is not after the join (%v)", ErrCatchUp, end, r.joined)
	}
	res.EventsPerSecond = float64(res.Events) / res.CatchUpSeconds
	if cfg.LiveRate > 0 {
		if res.Latency, err = measureLatency(ctx, cfg, src, r); err != nil {
			return res, err
		}
	}
	return res, nil
}

// measureCatchUp runs until the group's offsets reach ends, sampling memory
// and, with cfg.Profile, profiling the CPU.
func measureCatchUp(ctx context.Context, cfg Config, src *source, r *run, ends map[cdctable.TopicPartition]int64, res *Result) error {
	// Producing left garbage behind; the peaks must be the processor's.
	runtime.GC()
	debug.FreeOSMemory()
	resetPeakRSS()
	mon := startMemMonitor()
	var prof bytes.Buffer
	profiling := cfg.Profile && pprof.StartCPUProfile(&prof) == nil // fails if one already runs
	cpu0 := cpuTime()
	r.start(ctx)
	err := r.waitCommitted(ctx, src, ends, cfg.CatchUpTimeout)
	res.CPUSeconds = (cpuTime() - cpu0).Seconds()
	if profiling {
		pprof.StopCPUProfile()
	}
	res.PeakHeapBytes = mon.stop()
	res.PeakRSSBytes = peakRSS()
	if err != nil {
		return err
	}
	if cfg.HeapProfilePath != "" {
		runtime.GC() // a heap profile shows the allocations of completed cycles only
		if err := writeHeapProfile(cfg.HeapProfilePath); err != nil {
			return err
		}
	}
	res.EventsPerCPUSecond = float64(res.Events) / res.CPUSeconds
	if profiling {
		if res.CPUShares, err = ProfileShares(prof.Bytes()); err != nil {
			return fmt.Errorf("reading the CPU profile: %w", err)
		}
		if cfg.ProfilePath != "" {
			if err := os.WriteFile(cfg.ProfilePath, prof.Bytes(), 0o644); err != nil {
				return fmt.Errorf("writing the CPU profile: %w", err)
			}
		}
	}
	return nil
}

func writeHeapProfile(path string) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing the heap profile: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("writing the heap profile: %w", cerr)
		}
	}()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		return fmt.Errorf("writing the heap profile: %w", err)
	}
	return nil
}

// measureLatency produces live events and measures when they became
// visible.
func measureLatency(ctx context.Context, cfg Config, src *source, r *run) (*Latency, error) {
	events, err := src.produceLive(ctx, cfg.LiveRate, cfg.LiveDuration)
	if err != nil {
		return nil, fmt.Errorf("producing live events: %w", err)
	}
	ends, err := src.endOffsets(ctx)
	if err != nil {
		return nil, err
	}
	if err := r.waitCommitted(ctx, src, ends, cfg.CatchUpTimeout); err != nil {
		return nil, err
	}
	tl := timelines{}
	if _, err := tl.readAll(ctx, r, ends); err != nil {
		return nil, err
	}
	return tl.latency(events)
}

// run is the processor under measurement.
type run struct {
	p      *processor.Processor
	group  string
	total  int // partitions
	stores map[string]deltalog.Store
	reg    *prometheus.Registry
	cancel context.CancelFunc
	done   chan error
	joined time.Time // when the group first owned every partition
}

func startProcessor(ctx context.Context, cfg Config, src *source, root string) (*run, error) {
	regc, err := codecs.NewRegistry(codecs.RegistryOptions{URLs: []string{src.reg.URL()}})
	if err != nil {
		return nil, fmt.Errorf("creating registry client: %w", err)
	}
	dec, err := codecs.NewDecoder(regc, codecs.Options{})
	if err != nil {
		return nil, fmt.Errorf("creating decoder: %w", err)
	}
	r := &run{group: cfg.Prefix + "-group", total: cfg.Partitions * len(src.tables), stores: map[string]deltalog.Store{},
		reg: prometheus.NewRegistry()}
	router, err := route.NewRouter(route.DefaultTablePath)
	if err != nil {
		return nil, err
	}
	open := tableOpener(cfg, root)
	for _, topic := range src.topics() {
		path, err := router.Route(topic)
		if err != nil {
			return nil, fmt.Errorf("routing %s: %w", topic, err)
		}
		if r.stores[topic], err = open(ctx, path); err != nil {
			return nil, fmt.Errorf("opening store of %s: %w", path, err)
		}
	}
	opts := processor.Options{
		Brokers:     cfg.Brokers,
		Group:       r.group,
		Topics:      src.topics(),
		OpenStore:   open,
		Decoder:     dec,
		Batch:       cfg.Batch,
		Maintenance: cfg.Maintenance,
	}
	if cfg.ChangeLog {
		opts.PerTable = func(src route.TableSource) processor.TableSettings {
			return processor.TableSettings{ChangeLog: strings.TrimRight(src.Path, "/") + "_changes"}
		}
	}
	r.p, err = processor.New(opts, processor.WithRegisterer(r.reg))
	if err != nil {
		return nil, fmt.Errorf("creating processor: %w", err)
	}
	return r, nil
}

// commitsByReason counts the processor's Delta commits so far by why each
// batch was committed (cdc2delta_commits_total): a batch forced by
// max_delay in a catch-up is a wait with nothing left to read.
func (r *run) commitsByReason() (map[string]int, error) {
	mfs, err := r.reg.Gather()
	if err != nil {
		return nil, fmt.Errorf("reading the processor's metrics: %w", err)
	}
	out := map[string]int{}
	for _, mf := range mfs {
		if mf.GetName() != "cdc2delta_commits_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" {
					out[l.GetValue()] += int(m.GetCounter().GetValue())
				}
			}
		}
	}
	return out, nil
}

// tableOpener opens the table at a routed path under root: with
// cfg.OpenStore, or as a local directory.
func tableOpener(cfg Config, root string) func(context.Context, string) (deltalog.Store, error) {
	if cfg.OpenStore != nil {
		// Not filepath.Join, which would fold the "//" of a URL.
		return func(ctx context.Context, path string) (deltalog.Store, error) {
			return cfg.OpenStore(ctx, strings.TrimRight(root, "/")+"/"+path)
		}
	}
	return func(_ context.Context, path string) (deltalog.Store, error) {
		return localstore.New(localstore.Options{Dir: filepath.Join(root, path), NoSync: !cfg.Fsync})
	}
}

// start runs the processor in the background.
func (r *run) start(ctx context.Context) {
	ctx, r.cancel = context.WithCancel(ctx)
	r.done = make(chan error, 1)
	go func() { r.done <- r.p.Run(ctx) }()
}

// waitCommitted waits until the group's committed offsets reach ends (the
// processor commits them after the Delta commit holding the same offsets).
// It marks when the processor first owns every partition: the clock starts
// there, as a group join is a fixed cost that says nothing about
// throughput.
func (r *run) waitCommitted(ctx context.Context, src *source, ends map[cdctable.TopicPartition]int64, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		if r.joined.IsZero() && r.p.Status().Partitions == r.total {
			r.joined = time.Now()
		}
		select {
		case err := <-r.done:
			r.done <- err // for close
			return fmt.Errorf("processor stopped: %w", err)
		default:
		}
		if !r.joined.IsZero() {
			offs, err := src.adm.FetchOffsets(ctx, r.group)
			if err == nil && committedAll(offs, ends) {
				return nil
			}
		}
		wait := 10 * time.Millisecond
		if r.joined.IsZero() {
			wait = time.Millisecond // the clock starts at the join: be precise
		}
		if err := sleep(ctx, wait); err != nil {
			return fmt.Errorf("%w: %w", ErrCatchUp, err)
		}
	}
}

func committedAll(offs kadm.OffsetResponses, ends map[cdctable.TopicPartition]int64) bool {
	for tp, end := range ends {
		if end == 0 {
			continue
		}
		o, ok := offs.Lookup(tp.Topic, tp.Partition)
		if !ok || o.Err != nil || o.At < end {
			return false
		}
	}
	return true
}

// readAll reads every table's commits for the partitions in ends.
func (tl timelines) readAll(ctx context.Context, r *run, ends map[cdctable.TopicPartition]int64) (int, error) {
	parts := make(map[string][]cdctable.TopicPartition)
	for tp := range ends {
		parts[tp.Topic] = append(parts[tp.Topic], tp)
	}
	n := 0
	for topic, store := range r.stores {
		c, err := tl.read(ctx, store, parts[topic])
		n += c
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// reached returns when the last partition's end became visible.
func (tl timelines) reached(ends map[cdctable.TopicPartition]int64) (time.Time, error) {
	var last time.Time
	for tp, end := range ends {
		if end == 0 {
			continue
		}
		at, ok := tl.visibleAt(tp, end-1)
		if !ok {
			return last, fmt.Errorf("%w: %s/%d never reached offset %d", ErrCatchUp, tp.Topic, tp.Partition, end-1)
		}
		if at.After(last) {
			last = at
		}
	}
	return last, nil
}

// close stops the processor and waits for it.
func (r *run) close() error {
	var err error
	if r.cancel != nil {
		r.cancel()
		err = <-r.done
	}
	if cerr := r.p.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("stopping the processor: %w", err)
	}
	return nil
}
