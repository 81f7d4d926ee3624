package processor

import (
	"cmp"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// badRecords produces bad copies of a valid orders record to partition 0 and
// returns their offsets: a corrupt value, an unknown schema id and a missing
// key. The valid original is produced first, so the copies do not change
// the model.
func (pl *pipeline) badRecords(t *testing.T) []int64 {
	t.Helper()
	ctx := t.Context()
	orders := pl.tables[1]
	ev := pl.w.Next()
	for ev.Table != orders || ev.Tombstone || ev.Op == dbzgen.OpDelete {
		key, value, err := pl.gen.Encode(ctx, ev)
		require.NoError(t, err)
		require.NoError(t, pl.producer.ProduceSync(ctx, &kgo.Record{Topic: ev.Table.Topic(), Key: key, Value: value}).FirstErr())
		ev = pl.w.Next()
	}
	key, value, err := pl.gen.Encode(ctx, ev)
	require.NoError(t, err)
	cl, err := kgo.NewClient(kgo.SeedBrokers(pl.brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	topic := orders.Topic()
	recs := []*kgo.Record{
		{Topic: topic, Partition: 0, Key: key, Value: value},
		{Topic: topic, Partition: 0, Key: key, Value: []byte("not avro")},
		{Topic: topic, Partition: 0, Key: key, Value: append(codecs.AppendHeader(nil, 987654), 2, 4)},
		{Topic: topic, Partition: 0, Key: nil, Value: value},
	}
	res := cl.ProduceSync(ctx, recs...)
	require.NoError(t, res.FirstErr())
	var offs []int64
	for _, r := range res[1:] {
		offs = append(offs, r.Record.Offset)
	}
	return offs
}

func TestBadInputDeadLetter(t *testing.T) {
	pl := newPipeline(t, dbzgen.WorkloadOptions{Seed: 4, Keys: 30, Snapshot: true})
	pl.produce(200)
	bad := pl.badRecords(t)
	pl.produce(200)
	opts := pl.options("dlq")
	opts.BadInput = PolicyDeadLetter
	opts.UnknownSchemaRetries = 1
	r := pl.start(opts)
	pl.waitCaughtUp()
	pl.requireModel()
	pl.requireGroupOffsets("dlq")
	require.True(t, r.p.Status().Ready())
	require.Equal(t, 3.0, metricSum(t, r.reg, "cdc2delta_events_dead_lettered_total"))
	require.Equal(t, 3.0, metricSum(t, r.reg, "cdc2delta_bad_input_total"))
	for _, reason := range []string{"bad_header", "unknown_schema", "missing_key"} {
		require.Equal(t, 1.0, metricWith(t, r.reg, "cdc2delta_events_dead_lettered_total", "reason", reason), reason)
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(pl.brokers...), kgo.ConsumeTopics(pl.dlq),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer cl.Close()
	var got []*kgo.Record
	for len(got) < 3 {
		fs := cl.PollFetches(t.Context())
		require.NoError(t, fs.Err())
		got = append(got, fs.Records()...)
	}
	require.Len(t, got, 3)
	// The dead-letter topic has several partitions; order by source offset.
	slices.SortFunc(got, func(a, b *kgo.Record) int {
		x, _ := strconv.ParseInt(headerOf(a, HeaderOffset), 10, 64)
		y, _ := strconv.ParseInt(headerOf(b, HeaderOffset), 10, 64)
		return cmp.Compare(x, y)
	})
	for i, dl := range got {
		h := map[string]string{}
		for _, kv := range dl.Headers {
			h[kv.Key] = string(kv.Value)
		}
		require.Equal(t, pl.tables[1].Topic(), h[HeaderTopic])
		require.Equal(t, "0", h[HeaderPartition])
		require.Equal(t, strconv.FormatInt(bad[i], 10), h[HeaderOffset])
		require.NotEmpty(t, h[HeaderError])
	}
	require.Nil(t, got[2].Key, "the original (null) key is kept")
	require.Equal(t, []byte("not avro"), got[0].Value, "the original bytes are kept")
}

func TestBadInputFail(t *testing.T) {
	pl := newPipeline(t, dbzgen.WorkloadOptions{Seed: 5, Keys: 30, Snapshot: true, SkipTombstones: true})
	pl.produce(200)
	bad := pl.badRecords(t)
	pl.produce(200)
	r := pl.start(pl.options("fail"))
	orders, customers := pl.tables[1], pl.tables[0]
	p0 := cdctable.TopicPartition{Topic: orders.Topic(), Partition: 0}
	require.Eventually(t, func() bool { return len(r.p.Status().Failed) == 1 }, 20*time.Second, 20*time.Millisecond)
	st := r.p.Status()
	require.False(t, st.Ready())
	require.Equal(t, tablePath(orders), st.Failed[0].Table)
	require.Equal(t, bad[0], st.Failed[0].Offset)
	require.ErrorIs(t, st.Failed[0], ErrTableFailed)
	require.ErrorIs(t, st.Failed[0], codecs.ErrBadHeader)
	// Everything before the bad record is applied, nothing after it.
	require.Eventually(t, func() bool { return pl.txns(orders)[p0] == bad[0]-1 }, 10*time.Second, 20*time.Millisecond)
	// The other table carries on.
	ends := pl.endOffsets(customers.Topic())
	require.Eventually(t, func() bool {
		tx := pl.txns(customers)
		for tp, end := range ends {
			if end > 0 && tx[tp] != end-1 {
				return false
			}
		}
		return true
	}, 20*time.Second, 20*time.Millisecond)
	// The customers table caught up after the stop was reported: the stopped table had
	// that same time to move, had it been able to.
	require.Equal(t, bad[0]-1, pl.txns(orders)[p0], "a stopped table must not move")
	require.Equal(t, 1.0, metricSum(t, r.reg, "cdc2delta_table_failed"))

	srv := httptest.NewServer(r.p.Handler(r.reg))
	defer srv.Close()
	code, body := get(t, srv.URL+"/readyz")
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Contains(t, body, tablePath(orders))
	code, _ = get(t, srv.URL+"/healthz")
	require.Equal(t, http.StatusOK, code)
	code, body = get(t, srv.URL+"/metrics")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `cdc2delta_bad_input_total{policy="fail",reason="bad_header"`)
}

func TestRegistryOutageStallsWithoutLoss(t *testing.T) {
	pl := newPipeline(t, dbzgen.WorkloadOptions{Seed: 6, Keys: 30, Snapshot: true})
	pl.produce(200)
	pl.regDown.Store(true)
	r := pl.start(pl.options("outage"))
	// Before asserting that nothing was applied, show that it could have been: every
	// table has polled records and is trying to decode them.
	waitRegistryWaiting(t, r, len(pl.tables))
	for _, tb := range pl.tables {
		require.Empty(t, pl.txns(tb), "nothing can be applied while the registry is down")
	}
	require.Empty(t, r.p.Status().Failed)
	require.Zero(t, metricSum(t, r.reg, "cdc2delta_bad_input_total"))
	pl.regDown.Store(false)
	pl.waitCaughtUp()
	pl.requireModel()
	require.True(t, r.p.Status().Ready())
}

// waitRegistryWaiting waits until n tables of r have polled records and wait for the
// schema registry to decode them: the precondition of "nothing applied in an outage".
func waitRegistryWaiting(t *testing.T, r *running, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		waiting := 0
		for _, ts := range r.p.Status().Tables {
			if ts.Registry {
				waiting++
			}
		}
		return waiting == n
	}, 20*time.Second, 10*time.Millisecond, "%d tables wait for the registry", n)
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

func headerOf(r *kgo.Record, key string) string {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

func TestBadInputReason(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&codecs.DecodeError{Err: codecs.ErrBadHeader}, "bad_header"},
		{&codecs.DecodeError{Err: &codecs.OpError{Op: "x"}}, "unknown_op"},
		{&codecs.DecodeError{Err: &codecs.RangeError{Column: "c"}}, "out_of_range"},
		{&codecs.DecodeError{Err: codecs.ErrMissingKey}, "missing_key"},
		{&codecs.DecodeError{Err: codecs.ErrUnknownSchema}, "unknown_schema"},
		{&codecs.DecodeError{Err: codecs.ErrRegistryRefused}, "registry_refused"},
		{errors.New("surprise"), "other"},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, badInputReason(tc.err), "%v", tc.err)
	}
}

func TestDeadLetterRecord(t *testing.T) {
	src := &kgo.Record{Topic: "shop.sales.dbo.orders", Partition: 2, Offset: 41, Key: []byte("k"), Value: make([]byte, 2000),
		Headers: []kgo.RecordHeader{{Key: "trace", Value: []byte("t1")}}}
	dl, dropped := deadLetterRecord(deadLetterTopic("dlq.{topic}", src.Topic), src, errors.New("boom"), 1<<20)
	require.False(t, dropped)
	require.Equal(t, "dlq.shop.sales.dbo.orders", dl.Topic)
	require.Equal(t, src.Key, dl.Key)
	require.Equal(t, src.Value, dl.Value)
	require.Equal(t, "t1", headerOf(dl, "trace"), "original headers are kept")
	require.Equal(t, "boom", headerOf(dl, HeaderError))
	require.Equal(t, "shop.sales.dbo.orders", headerOf(dl, HeaderTopic))
	require.Equal(t, "2", headerOf(dl, HeaderPartition))
	require.Equal(t, "41", headerOf(dl, HeaderOffset))
	require.Empty(t, headerOf(dl, HeaderValueDropped))
	require.Len(t, src.Headers, 1, "the source record is not modified")

	// Too large for a topic of 2,000 bytes: the value stays behind.
	dl, dropped = deadLetterRecord("dlq", src, errors.New("boom"), 2000)
	require.True(t, dropped)
	require.Nil(t, dl.Value)
	require.Equal(t, src.Key, dl.Key)
	require.Equal(t, "2000", headerOf(dl, HeaderValueDropped))
	require.Equal(t, "41", headerOf(dl, HeaderOffset))
	require.Len(t, src.Value, 2000, "the source record is not modified")
}

func TestOptionsValidate(t *testing.T) {
	dec, err := codecs.NewDecoder(mapSource{}, codecs.Options{})
	require.NoError(t, err)
	good := Options{Brokers: []string{"b"}, Group: "g", Topics: []string{"t"}, Decoder: dec,
		OpenStore: func(context.Context, string) (deltalog.Store, error) { return nil, nil }}
	require.NoError(t, good.validate())
	tests := []struct {
		name   string
		change func(o *Options)
		want   string
	}{
		{"no brokers", func(o *Options) { o.Brokers = nil }, "brokers"},
		{"no group", func(o *Options) { o.Group = "" }, "group"},
		{"bad regex", func(o *Options) { o.Topics, o.TopicRegex = []string{"("}, true }, "topics"},
		{"bad reset", func(o *Options) { o.ResetOffset = "middle" }, "reset offset"},
		{"dlq without topic", func(o *Options) { o.BadInput = PolicyDeadLetter }, "dead letter topic"},
		{"table dlq without topic", func(o *Options) { o.TablePolicies = map[string]Policy{"a": PolicyDeadLetter} }, "dead letter topic"},
		{"unknown policy", func(o *Options) { o.BadInput = "skip" }, "bad input"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := good
			tc.change(&o)
			err := o.validate()
			require.ErrorIs(t, err, ErrOptions)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// mapSource is a SchemaSource with no schemas.
type mapSource map[int]string

func (m mapSource) SchemaByID(_ context.Context, id int) (string, error) {
	if s, ok := m[id]; ok {
		return s, nil
	}
	return "", codecs.ErrUnknownSchema
}
