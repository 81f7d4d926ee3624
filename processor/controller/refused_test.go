package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
)

// TestControllerRefusedTransactionsShowAsProblem: a transaction topic whose
// ids are MariaDB GTIDs stops Run, and from then on Problems names the
// setting (/readyz shows it). While Run keeps the table, Problems is empty.
func TestControllerRefusedTransactionsShowAsProblem(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "p.db.dbo.t", "p.transaction"))
	require.NoError(t, err)
	defer cluster.Close()
	dec, err := codecs.NewDecoder(noSchemas{}, codecs.Options{Converter: codecs.ConverterJSON})
	require.NoError(t, err)
	o := testOptions(t, cluster.ListenAddrs())
	o.Decoder, o.TransactionTopic, o.Interval = dec, "p.transaction", 20*time.Millisecond
	c, err := New(o)
	require.NoError(t, err)
	defer c.Close()

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() { cancel(); <-done }()
	// Rounds over an empty transaction topic: kept, no problem.
	time.Sleep(200 * time.Millisecond)
	require.Empty(t, c.Problems())

	g := dbzgen.New(nil, dbzgen.Options{Prefix: "p"})
	key, value, err := g.EncodeJSON(dbzgen.Event{Marker: &dbzgen.TxMarker{Status: dbzgen.TxBegin, ID: "0-1-12", ProcessedAt: time.UnixMilli(1)}}, dbzgen.DecimalBase64)
	require.NoError(t, err)
	cl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...))
	require.NoError(t, err)
	defer cl.Close()
	require.NoError(t, cl.ProduceSync(t.Context(), &kgo.Record{Topic: "p.transaction", Key: key, Value: value}).FirstErr())

	select {
	case err := <-done:
		require.ErrorIs(t, err, ErrTransactions)
		done <- err // for the deferred wait
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not stop on a GTID transaction topic")
	}
	p := c.Problems()
	require.Len(t, p, 1)
	require.True(t, strings.HasPrefix(p[0], "control table not kept: "), p[0])
	require.Contains(t, p[0], "remove control.transaction_topic")
}
