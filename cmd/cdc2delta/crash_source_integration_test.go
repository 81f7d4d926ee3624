//go:build integration

package main

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// crashPartitions is the partition count of every source topic.
const crashPartitions = 3

// inventory is a third source table, keyed by an int, so the crash test
// covers string and integer keys over three tables.
func inventory() dbzgen.TableDef {
	return dbzgen.TableDef{
		Database: "sales", Schema: "dbo", Name: "inventory",
		Columns: []dbzgen.Column{
			{Name: "item_id", Type: "int"},
			{Name: "sku", Type: "nvarchar(20)"},
			{Name: "qty", Type: "int", Nullable: true},
			{Name: "reserved", Type: "bigint", Nullable: true},
			{Name: "active", Type: "bit"},
		},
		Key: []string{"item_id"},
	}
}

// crashSource is the source side of the crash test: an in-process schema
// registry on 127.0.0.1, the Debezium generator over three tables, their
// topics on the real broker and a producer that keeps writing the
// workload in the background while the binary is killed and restarted.
type crashSource struct {
	t        *testing.T
	regURL   string
	gen      *dbzgen.Generator
	tables   []*dbzgen.Table
	producer *kgo.Client
	adm      *kadm.Client

	mu       sync.Mutex // guards w and produced while the producer runs
	w        *dbzgen.Workload
	produced int
}

func newCrashSource(t *testing.T, brokers []string, prefix string, wo dbzgen.WorkloadOptions) *crashSource {
	t.Helper()
	gen, regURL := newTestGenerator(t, prefix)
	s := &crashSource{t: t, regURL: regURL, gen: gen}
	var topics []string
	for _, def := range []dbzgen.TableDef{dbzgen.Customers(), dbzgen.Orders(), inventory()} {
		tb, err := gen.Table(def)
		require.NoError(t, err)
		s.tables = append(s.tables, tb)
		topics = append(topics, tb.Topic())
	}
	var err error
	s.producer, err = kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ProducerLinger(5*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(s.producer.Close)
	s.adm = kadm.NewClient(s.producer)
	created, err := s.adm.CreateTopics(t.Context(), crashPartitions, 1, nil, topics...)
	require.NoError(t, err)
	require.NoError(t, created.Error())
	t.Cleanup(func() { // the shared broker of a developer machine outlives the test
		_, _ = s.adm.DeleteTopics(context.WithoutCancel(t.Context()), topics...)
	})
	s.w, err = dbzgen.NewWorkload(wo, s.tables...)
	require.NoError(t, err)
	return s
}

// produce encodes the workload's next n events and produces them keyed (a
// key stays in one partition, in order).
func (s *crashSource) produce(ctx context.Context, n int) error {
	s.mu.Lock()
	recs := make([]*kgo.Record, 0, n)
	for range n {
		ev := s.w.Next()
		key, value, err := s.gen.Encode(ctx, ev)
		if err != nil {
			s.mu.Unlock()
			return err
		}
		recs = append(recs, &kgo.Record{Topic: ev.Table.Topic(), Key: key, Value: value})
	}
	s.produced += n
	s.mu.Unlock()
	return s.producer.ProduceSync(ctx, recs...).FirstErr()
}

// produceUntil produces a burst of n events every interval until stop
// closes, and reports the first error on the returned channel.
func (s *crashSource) produceUntil(ctx context.Context, stop <-chan struct{}, n int, interval time.Duration) <-chan error {
	done := make(chan error, 1)
	go func() {
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			if err := s.produce(ctx, n); err != nil {
				done <- err
				return
			}
			select {
			case <-stop:
				done <- nil
				return
			case <-tick.C:
			}
		}
	}()
	return done
}

// produceInBackground runs produceUntil and returns the function that stops
// it and checks its error; it also runs at the test's cleanup, once.
func (s *crashSource) produceInBackground(ctx context.Context, n int, interval time.Duration) func() {
	stop := make(chan struct{})
	producing := s.produceUntil(ctx, stop, n, interval)
	var once sync.Once
	stopProducing := func() {
		once.Do(func() {
			close(stop)
			require.NoError(s.t, <-producing)
		})
	}
	s.t.Cleanup(stopProducing)
	return stopProducing
}

// endOffsets returns every source partition's end offset.
func (s *crashSource) endOffsets() map[cdctable.TopicPartition]int64 {
	s.t.Helper()
	var topics []string
	for _, tb := range s.tables {
		topics = append(topics, tb.Topic())
	}
	ends, err := s.adm.ListEndOffsets(s.t.Context(), topics...)
	require.NoError(s.t, err)
	require.NoError(s.t, ends.Error())
	out := map[cdctable.TopicPartition]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		out[cdctable.TopicPartition{Topic: o.Topic, Partition: o.Partition}] = o.Offset
	})
	return out
}

// rows returns the source table's current rows; call it once producing
// has stopped.
func (s *crashSource) rows(tb *dbzgen.Table) []dbzgen.Row {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Rows(tb)
}
