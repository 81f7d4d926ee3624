package e2ebench

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

func TestTimelinesRead(t *testing.T) {
	ctx := t.Context()
	store := memstore.New(memstore.Options{})
	a := cdctable.TopicPartition{Topic: "shop.sales.dbo.orders", Partition: 0}
	b := cdctable.TopicPartition{Topic: "shop.sales.dbo.orders", Partition: 1}
	other := cdctable.TopicPartition{Topic: "shop.sales.dbo.orders", Partition: 2}
	base := time.UnixMilli(1_700_000_000_000)
	commit := func(v int, ms int64, txns ...string) {
		body := fmt.Sprintf(`{"commitInfo":{"timestamp":%d,"operation":"MERGE"}}`+"\n", base.UnixMilli()+ms)
		for _, txn := range txns {
			body += txn + "\n"
		}
		body += `{"add":{"path":"x.parquet","partitionValues":{},"size":1,"modificationTime":1,"dataChange":true,"stats":"{\"numRecords\":1}"}}` + "\n"
		require.NoError(t, store.Put(ctx, fmt.Sprintf("_delta_log/%020d.json", v), []byte(body)))
	}
	txn := func(tp cdctable.TopicPartition, v int64) string {
		return fmt.Sprintf(`{"txn":{"appId":%q,"version":%d}}`, tp.AppID(), v)
	}
	commit(0, 100, txn(a, 9))
	commit(1, 250, txn(a, 19), txn(b, 4))
	commit(2, 400, txn(b, 14), txn(other, 3))
	require.NoError(t, store.Put(ctx, "_delta_log/00000000000000000002.checkpoint.parquet", []byte("not json")))
	require.NoError(t, store.Put(ctx, "_delta_log/_last_checkpoint", []byte("{}")))

	tl := timelines{}
	n, err := tl.read(ctx, store, []cdctable.TopicPartition{a, b})
	require.NoError(t, err)
	require.Equal(t, 3, n)
	require.Len(t, tl, 2, "partitions not asked for are left out")

	for _, tc := range []struct {
		tp     cdctable.TopicPartition
		offset int64
		ms     int64
		ok     bool
	}{
		{a, 0, 100, true}, {a, 9, 100, true}, {a, 10, 250, true}, {a, 19, 250, true}, {a, 20, 0, false},
		{b, 0, 250, true}, {b, 5, 400, true}, {b, 15, 0, false},
	} {
		at, ok := tl.visibleAt(tc.tp, tc.offset)
		require.Equal(t, tc.ok, ok, "%v@%d", tc.tp, tc.offset)
		if ok {
			require.Equal(t, base.Add(time.Duration(tc.ms)*time.Millisecond), at, "%v@%d", tc.tp, tc.offset)
		}
	}

	end, err := tl.reached(map[cdctable.TopicPartition]int64{a: 20, b: 15})
	require.NoError(t, err)
	require.Equal(t, base.Add(400*time.Millisecond), end)
	_, err = tl.reached(map[cdctable.TopicPartition]int64{a: 21})
	require.ErrorIs(t, err, ErrCatchUp)

	lat, err := tl.latency([]sent{
		{a, 5, base}, {a, 15, base.Add(50 * time.Millisecond)}, {b, 10, base.Add(300 * time.Millisecond)},
	})
	require.NoError(t, err)
	require.Equal(t, 3, lat.Events)
	require.InDelta(t, 0.1, lat.P50Seconds, 1e-9) // 100, 200, 100 ms sorted: 100, 100, 200
	require.InDelta(t, 0.2, lat.P99Seconds, 1e-9)
	require.InDelta(t, 0.2, lat.MaxSeconds, 1e-9)
	_, err = tl.latency([]sent{{a, 99, base}})
	require.Error(t, err)
}

func TestReadCommitRejectsCommitWithoutTime(t *testing.T) {
	ctx := t.Context()
	store := memstore.New(memstore.Options{})
	require.NoError(t, store.Put(ctx, "_delta_log/00000000000000000000.json", []byte(`{"txn":{"appId":"x","version":1}}`+"\n")))
	_, err := timelines{}.read(ctx, store, []cdctable.TopicPartition{{Topic: "x"}})
	require.ErrorContains(t, err, "no commitInfo timestamp")
}

func TestConfigDefaultsAndValidation(t *testing.T) {
	c := Config{Brokers: []string{"b:9092"}}.withDefaults()
	require.NoError(t, c.validate())
	require.Equal(t, MaxTables, c.Tables)
	require.NotEmpty(t, c.Prefix)
	for name, bad := range map[string]Config{
		"no brokers": {Tables: 1, Events: 1, Partitions: 1, Keys: 1},
		"tables":     {Brokers: []string{"b"}, Tables: MaxTables + 1, Events: 1, Partitions: 1, Keys: 1},
		"events":     {Brokers: []string{"b"}, Tables: 1, Events: -1, Partitions: 1, Keys: 1},
	} {
		require.ErrorIs(t, bad.validate(), ErrConfig, name)
	}
	_, err := Run(t.Context(), Config{})
	require.ErrorIs(t, err, ErrConfig)
}

func TestCategory(t *testing.T) {
	for fn, want := range map[string]string{
		"github.com/cdc2delta/cdc2delta/codecs.(*Decoder).DecodeRecord":   CatDecode,
		"github.com/linkedin/goavro/v2.longNativeFromBinary":              CatDecode,
		"github.com/cdc2delta/cdc2delta/deltalog/datafile.Write":          CatParquet,
		"github.com/parquet-go/parquet-go/encoding/plain.(*Encoding).Enc": CatParquet,
		"github.com/cdc2delta/cdc2delta/deltalog/localstore.(*Store).Put": CatCommit,
		"github.com/cdc2delta/cdc2delta/deltalog.(*Table).Commit":         CatCommit,
		"github.com/cdc2delta/cdc2delta/processor.(*Processor).route":     CatMerge,
		"github.com/twmb/franz-go/pkg/kgo.(*Client).PollRecords":          CatKafka,
		"github.com/cdc2delta/cdc2delta/processorx.F":                     "",
		"github.com/klauspost/compress/zstd.(*Decoder).DecodeAll":         "",
		"runtime.mallocgc": "",
		"github.com/cdc2delta/cdc2delta/internal/harness/e2ebench.Run": "",
	} {
		require.Equal(t, want, Category(fn), fn)
	}
}
