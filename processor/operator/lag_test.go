package operator

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/route"
)

// TestLag reports each partition's next offset from the table's txn, else
// the group's offset, else the partition's start; a topic with no table yet
// lags by its whole length, and one the router cannot name is left out.
func TestLag(t *testing.T) {
	applied, unmade := "p.db.dbo.applied", "p.db.dbo.unmade"
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, applied, unmade, "unroutable"))
	require.NoError(t, err)
	defer cluster.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for _, topic := range []string{applied, unmade} {
		for p := range int32(2) {
			for range 10 {
				require.NoError(t, cl.ProduceSync(t.Context(), &kgo.Record{Topic: topic, Partition: p, Value: []byte("x")}).FirstErr())
			}
		}
	}
	// applied: partition 0 has txn 6 and a group offset of 3 (txn wins);
	// partition 1 only a group offset of 4. unmade: a group offset of 2 on
	// partition 0.
	var offs kadm.Offsets
	offs.AddOffset(applied, 0, 3, -1)
	offs.AddOffset(applied, 1, 4, -1)
	offs.AddOffset(unmade, 0, 2, -1)
	resp, err := adm.CommitOffsets(t.Context(), "g", offs)
	require.NoError(t, err)
	require.NoError(t, resp.Error())

	stores := map[string]deltalog.Store{}
	open := func(_ context.Context, path string) (deltalog.Store, error) {
		if stores[path] == nil {
			stores[path] = memstore.New(memstore.Options{})
		}
		return stores[path], nil
	}
	router, err := route.NewRouter("")
	require.NoError(t, err)
	st, err := open(t.Context(), "db/dbo/applied")
	require.NoError(t, err)
	tbl, err := deltalog.Open(t.Context(), st)
	require.NoError(t, err)
	schema := &deltalog.StructType{Fields: []deltalog.StructField{{Name: "x", Type: deltalog.TypeLong, Nullable: true}}}
	ss, err := schema.SchemaString()
	require.NoError(t, err)
	proto := deltalog.MinimalFeaturesProtocol(schema, nil)
	meta := deltalog.Metadata{ID: "t", Format: deltalog.Format{Provider: "parquet"}, SchemaString: ss}
	txn := &deltalog.Txn{AppID: cdctable.TopicPartition{Topic: applied, Partition: 0}.AppID(), Version: 6}
	_, err = tbl.Commit(t.Context(), nil, []deltalog.Action{{Protocol: &proto}, {Metadata: &meta}, {Txn: txn}},
		deltalog.Operation{Name: deltalog.OpCreateTable}, deltalog.ExactVersion())
	require.NoError(t, err)

	rows, err := Lag(t.Context(), adm, 0, "g", []string{unmade, applied, "unroutable"}, router, open)
	require.NoError(t, err)
	ptr := func(v int64) *int64 { return &v }
	require.Equal(t, []PartitionLag{
		{Table: "db/dbo/applied", Topic: applied, Partition: 0, DeltaTxn: ptr(6), GroupOffset: ptr(3), HighWatermark: 10, Lag: 3},
		{Table: "db/dbo/applied", Topic: applied, Partition: 1, GroupOffset: ptr(4), HighWatermark: 10, Lag: 6},
		{Table: "db/dbo/unmade", Topic: unmade, Partition: 0, GroupOffset: ptr(2), HighWatermark: 10, Lag: 8},
		{Table: "db/dbo/unmade", Topic: unmade, Partition: 1, HighWatermark: 10, Lag: 10},
	}, rows)
}
