package e2ebench

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
	"golang.org/x/sync/errgroup"

	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/registry"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// source is the in-process schema registry, the Debezium event generator
// and workload, and the producer writing their events to the broker.
type source struct {
	reg    *registry.Registry
	gen    *dbzgen.Generator
	tables []*dbzgen.Table
	w      *dbzgen.Workload
	cl     *kgo.Client
	adm    *kadm.Client
}

// tableDefs are the benchmark's source tables: the sample database and a
// second table shaped like orders.
func tableDefs() []dbzgen.TableDef {
	history := dbzgen.Orders()
	history.Name = "order_history"
	return []dbzgen.TableDef{dbzgen.Customers(), dbzgen.Orders(), history}
}

func newSource(ctx context.Context, cfg Config) (_ *source, err error) {
	s := &source{}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	var src *sr.Client
	if s.reg, src, err = startRegistry(ctx); err != nil {
		return nil, err
	}
	opts := dbzgen.DefaultOptions()
	opts.Prefix = cfg.Prefix
	s.gen = dbzgen.New(src, opts)
	for _, def := range tableDefs()[:cfg.Tables] {
		t, err := s.gen.Table(def)
		if err != nil {
			return nil, fmt.Errorf("compiling table %s: %w", def.Name, err)
		}
		s.tables = append(s.tables, t)
	}
	s.w, err = dbzgen.NewWorkload(dbzgen.WorkloadOptions{
		Seed: 1, Keys: cfg.Keys, Snapshot: true, MaxTxEvents: 5, Redeliver: cfg.Redeliver,
	}, s.tables...)
	if err != nil {
		return nil, fmt.Errorf("creating workload: %w", err)
	}
	// Keyed records hash to partitions, so each key stays in order in one.
	if s.cl, err = kgo.NewClient(kgo.SeedBrokers(cfg.Brokers...), kgo.ProducerLinger(5*time.Millisecond)); err != nil {
		return nil, fmt.Errorf("creating producer: %w", err)
	}
	s.adm = kadm.NewClient(s.cl)
	return s, nil
}

func (s *source) close() {
	if s.cl != nil {
		s.cl.Close()
	}
	if s.reg != nil {
		_ = s.reg.Close() // only stops the listener
	}
}

func (s *source) topics() []string {
	out := make([]string, len(s.tables))
	for i, t := range s.tables {
		out[i] = t.Topic()
	}
	return out
}

// createTopics creates the topics and waits until the metadata shows every
// partition, so no producer caches a partial count.
func (s *source) createTopics(ctx context.Context, partitions int) error {
	resp, err := s.adm.CreateTopics(ctx, int32(partitions), 1, nil, s.topics()...)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return fmt.Errorf("creating topics: %w", err)
	}
	for {
		ends, err := s.endOffsets(ctx)
		if err == nil && len(ends) == partitions*len(s.tables) {
			return nil
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return fmt.Errorf("waiting for topic metadata: %w", err)
		}
	}
}

func (s *source) deleteTopics(ctx context.Context) error {
	resp, err := s.adm.DeleteTopics(ctx, s.topics()...)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return fmt.Errorf("deleting topics: %w", err)
	}
	return nil
}

// endOffsets returns every partition's end offset.
func (s *source) endOffsets(ctx context.Context) (map[cdctable.TopicPartition]int64, error) {
	ends, err := s.adm.ListEndOffsets(ctx, s.topics()...)
	if err != nil {
		return nil, fmt.Errorf("listing end offsets: %w", err)
	}
	out := make(map[cdctable.TopicPartition]int64)
	var errs error
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			errs = o.Err
			return
		}
		out[cdctable.TopicPartition{Topic: o.Topic, Partition: o.Partition}] = o.Offset
	})
	if errs != nil {
		return nil, fmt.Errorf("listing end offsets: %w", errs)
	}
	return out, nil
}

// sent is one produced event: where it went and its source commit time.
type sent struct {
	tp     cdctable.TopicPartition
	offset int64
	at     time.Time
}

// produceBacklog encodes n events, in parallel, and produces them
// asynchronously: it is not measured, but it should not dominate a run.
func (s *source) produceBacklog(ctx context.Context, n int) error {
	const chunk = 10_000
	var (
		mu       sync.Mutex
		firstErr error
	)
	for done := 0; done < n; {
		evs := make([]dbzgen.Event, min(chunk, n-done))
		for i := range evs {
			evs[i] = s.w.Next() // the workload is sequential; encoding is not
		}
		recs := make([]*kgo.Record, len(evs))
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(runtime.GOMAXPROCS(0))
		for i := range evs {
			g.Go(func() error {
				key, value, err := s.gen.Encode(gctx, evs[i])
				if err != nil {
					return fmt.Errorf("encoding event: %w", err)
				}
				recs[i] = &kgo.Record{Topic: evs[i].Table.Topic(), Key: key, Value: value}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
		for _, r := range recs {
			s.cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
				if err != nil {
					mu.Lock()
					firstErr = cmp.Or(firstErr, err)
					mu.Unlock()
				}
			})
		}
		done += len(evs)
	}
	if err := s.cl.Flush(ctx); err != nil {
		return fmt.Errorf("producing: %w", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if firstErr != nil {
		return fmt.Errorf("producing: %w", firstErr)
	}
	return nil
}

// produceStamped encodes and produces n events, each with its source
// commit time set to now, just before producing it.
func (s *source) produceStamped(ctx context.Context, n int) ([]sent, error) {
	recs := make([]*kgo.Record, 0, n)
	at := make(map[*kgo.Record]time.Time, n)
	for range n {
		ev := s.w.Next()
		now := time.Now()
		ev.Source.Time = now
		key, value, err := s.gen.Encode(ctx, ev)
		if err != nil {
			return nil, fmt.Errorf("encoding event: %w", err)
		}
		r := &kgo.Record{Topic: ev.Table.Topic(), Key: key, Value: value}
		recs = append(recs, r)
		at[r] = now
	}
	res := s.cl.ProduceSync(ctx, recs...)
	if err := res.FirstErr(); err != nil {
		return nil, fmt.Errorf("producing: %w", err)
	}
	out := make([]sent, 0, n)
	for _, r := range res {
		out = append(out, sent{cdctable.TopicPartition{Topic: r.Record.Topic, Partition: r.Record.Partition}, r.Record.Offset, at[r.Record]})
	}
	return out, nil
}

// produceLive produces rate events/s for d, in 10ms steps, stamping each
// with its produce time. A step that falls behind is made up in the next.
func (s *source) produceLive(ctx context.Context, rate int, d time.Duration) ([]sent, error) {
	start := time.Now()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var out []sent
	for {
		elapsed := min(time.Since(start), d)
		if n := int(float64(rate)*elapsed.Seconds()) - len(out); n > 0 {
			got, err := s.produceStamped(ctx, n)
			if err != nil {
				return nil, err
			}
			out = append(out, got...)
		}
		if elapsed >= d {
			return out, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// startRegistry starts an in-process schema registry on loopback and a
// client of it.
func startRegistry(ctx context.Context) (*registry.Registry, *sr.Client, error) {
	reg, err := registry.New()
	if err != nil {
		return nil, nil, fmt.Errorf("creating schema registry: %w", err)
	}
	if err := reg.Start(ctx, "127.0.0.1:0"); err != nil {
		return reg, nil, fmt.Errorf("starting schema registry: %w", err)
	}
	cl, err := sr.NewClient(sr.URLs(reg.URL()))
	if err != nil {
		return reg, nil, fmt.Errorf("creating registry client: %w", err)
	}
	return reg, cl, nil
}
