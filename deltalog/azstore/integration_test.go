//go:build integration

package azstore_test

import (
	"net"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/azstore"
	"github.com/cdc2delta/cdc2delta/deltalog/storetest"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// azuriteStore opens a store on the Azurite at endpoint with the
// development account's key, its own client and the given prefix.
func azuriteStore(t *testing.T, endpoint, container, prefix string, mod ...func(*azstore.Options)) *azstore.Store {
	o := azstore.Options{
		Container:   container,
		Prefix:      prefix,
		Endpoint:    endpoint,
		Credentials: azstore.Credentials{AccountKey: fulltier.AzuriteKey},
	}
	for _, m := range mod {
		m(&o)
	}
	s, err := azstore.New(t.Context(), o)
	require.NoError(t, err)
	return s
}

func TestAzuriteConformance(t *testing.T) {
	endpoint := fulltier.AzureEndpoint(t)
	container := fulltier.NewContainer(t, endpoint)
	storetest.Run(t, func(t *testing.T) deltalog.Store {
		return azuriteStore(t, endpoint, container, "tables/"+uuid.NewString())
	})
}

// TestAzuriteRacingWriters races two writers, each with its own client, for
// the versions of one table.
func TestAzuriteRacingWriters(t *testing.T) {
	endpoint := fulltier.AzureEndpoint(t)
	container := fulltier.NewContainer(t, endpoint)
	lost := storetest.RacingWriters(t, [2]deltalog.Store{
		azuriteStore(t, endpoint, container, "race"), azuriteStore(t, endpoint, container, "race")}, 25)
	require.Positive(t, lost, "the writers never raced: the test proves nothing")
}

// TestAzuriteFrozen: a private Azurite stopped with SIGSTOP accepts
// connections and never answers; every operation fails within the request
// timeout with a *TimeoutError matching deltalog.ErrUnavailable, and works
// again once the server is thawed.
func TestAzuriteFrozen(t *testing.T) {
	const timeout = time.Second
	az := fulltier.StartAzurite(t)
	container := fulltier.NewContainer(t, az.Endpoint)
	s := azuriteStore(t, az.Endpoint, container, "t", func(o *azstore.Options) { o.RequestTimeout = timeout })
	ctx := t.Context()
	require.NoError(t, s.PutIfAbsent(ctx, "_delta_log/00000000000000000000.json", []byte("v0")))

	az.Freeze()
	for _, op := range []struct {
		name string
		run  func() error
	}{
		{"GetBlob", func() error { _, err := s.Get(ctx, "_delta_log/00000000000000000000.json"); return err }},
		{"PutBlob", func() error { return s.PutIfAbsent(ctx, "_delta_log/00000000000000000001.json", []byte("v1")) }},
		{"ListBlobs", func() error {
			_, err := storetest.Paths(ctx, s, "_delta_log/", "")
			return err
		}},
	} {
		start := time.Now()
		err := op.run()
		require.ErrorIs(t, err, deltalog.ErrUnavailable, op.name)
		var te *azstore.TimeoutError
		require.ErrorAs(t, err, &te, op.name)
		require.Equal(t, op.name, te.Op)
		require.Less(t, time.Since(start), 5*timeout, "%s waited past its deadline", op.name)
	}
	az.Thaw()
	got, err := storetest.Read(ctx, s, "_delta_log/00000000000000000000.json")
	require.NoError(t, err, "thawed, the server answers again")
	require.Equal(t, "v0", string(got))
}

// TestAzuriteRefused: nothing listens on the endpoint; the error is
// transient (the processor retries it) and names the connection.
func TestAzuriteRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	endpoint := "http://" + ln.Addr().String() + "/" + fulltier.AzuriteAccount
	require.NoError(t, ln.Close())
	s := azuriteStore(t, endpoint, "lake", "t", func(o *azstore.Options) { o.MaxRetries = 1 })
	_, err = s.Get(t.Context(), "_delta_log/00000000000000000000.json")
	require.ErrorIs(t, err, deltalog.ErrUnavailable)
	require.ErrorContains(t, err, "connection refused")
}

// TestAzuriteWrongKey: a wrong account key gets 403; the error is
// permanent (retrying hides a configuration problem), short, and does not
// quote the key.
func TestAzuriteWrongKey(t *testing.T) {
	endpoint := fulltier.AzureEndpoint(t)
	container := fulltier.NewContainer(t, endpoint)
	const wrong = "d3Jvbmcga2V5IHdyb25nIGtleSB3cm9uZyBrZXkgd3Jvbmcga2V5IHdyb25nIGtleQ=="
	s := azuriteStore(t, endpoint, container, "t", func(o *azstore.Options) { o.Credentials.AccountKey = wrong })
	err := s.PutIfAbsent(t.Context(), "_delta_log/00000000000000000000.json", []byte("v0"))
	require.Error(t, err)
	require.NotErrorIs(t, err, deltalog.ErrUnavailable)
	require.NotErrorIs(t, err, deltalog.ErrExist)
	var se *azstore.StatusError
	require.ErrorAs(t, err, &se)
	require.Equal(t, 403, se.Status)
	require.NotContains(t, err.Error(), wrong)
	require.NotContains(t, err.Error(), "\n", "one line in the logs")
}
