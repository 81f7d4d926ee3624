package controller

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
	"github.com/cdc2delta/cdc2delta/processor/cut"
	"github.com/cdc2delta/cdc2delta/processor/route"
)

// noSchemas is a schema source the tests here never reach.
type noSchemas struct{}

func (noSchemas) SchemaByID(context.Context, int) (string, error) {
	return "", errors.New("no schema registry in this test")
}

func testOptions(t testing.TB, brokers []string) Options {
	dec, err := codecs.NewDecoder(noSchemas{}, codecs.Options{})
	require.NoError(t, err)
	return Options{Brokers: brokers, Topics: []string{"p.db.dbo.t"}, Control: memstore.New(memstore.Options{}), Decoder: dec,
		OpenStore: func(context.Context, string) (deltalog.Store, error) { return memstore.New(memstore.Options{}), nil }}
}

// TestNewRefuses checks the options New refuses outright.
func TestNewRefuses(t *testing.T) {
	tests := []struct {
		name  string
		patch func(*Options)
		want  error
	}{
		{"no brokers", func(o *Options) { o.Brokers = nil }, ErrOptions},
		{"no OpenStore", func(o *Options) { o.OpenStore = nil }, ErrOptions},
		{"no control store", func(o *Options) { o.Control = nil }, ErrOptions},
		{"transaction topic without decoder", func(o *Options) { o.TransactionTopic, o.Decoder = "p.transaction", nil }, ErrOptions},
		{"bad topic regex", func(o *Options) { o.TopicRegex = "(" }, ErrOptions},
		{"bad table path", func(o *Options) { o.TablePath = "tables" }, route.ErrRoute},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := testOptions(t, []string{"127.0.0.1:1"})
			tc.patch(&o)
			c, err := New(o)
			require.ErrorIs(t, err, tc.want)
			require.Nil(t, c)
		})
	}
}

// TestControllerNamesAMissingTransactionTopic: a transaction topic that does
// not exist fails each round with what to check, instead of waiting in
// silence.
func TestControllerNamesAMissingTransactionTopic(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "p.db.dbo.t"))
	require.NoError(t, err)
	defer cluster.Close()
	o := testOptions(t, cluster.ListenAddrs())
	o.TransactionTopic = "ctlmiss.transaction"
	c, err := New(o)
	require.NoError(t, err)
	defer c.Close()
	for range 2 {
		err = c.Round(t.Context())
		require.ErrorIs(t, err, ErrOptions)
		require.ErrorContains(t, err, "provide.transaction.metadata=true")
	}
}

// TestPruneKeys keeps the newest keepKeys keys of PostgreSQL transactions
// and forgets older ones only once every table is complete through them.
func TestPruneKeys(t *testing.T) {
	key := func(i int) codecs.LSN {
		ev, err := codecs.PostgresPosition(int64(100+i), fmt.Sprintf(`["%d","%d"]`, 100+i, 100+i), false)
		require.NoError(t, err)
		return ev.Commit
	}
	c := &Controller{keys: map[string]codecs.LSN{}, tables: map[string]*controlledTable{"t": {}}}
	n := keepKeys + 10
	for i := range n {
		name := fmt.Sprintf("postgres:%d", i)
		c.keys[name], c.named = key(i), append(c.named, name)
	}
	// Complete through nothing: nothing goes.
	c.pruneKeys()
	require.Len(t, c.keys, n)
	// Complete through the fourth transaction: the first four go.
	c.tables["t"].last = cut.Completeness{Through: cut.End(key(3))}
	c.pruneKeys()
	require.Len(t, c.keys, n-4)
	require.Len(t, c.named, n-4)
	require.NotContains(t, c.keys, "postgres:3")
	require.Contains(t, c.keys, "postgres:4")
	// Complete through everything: keepKeys stay.
	c.tables["t"].last = cut.Completeness{Through: cut.End(key(n))}
	c.pruneKeys()
	require.Len(t, c.keys, keepKeys)
	require.Equal(t, "postgres:10", c.named[0])
}
