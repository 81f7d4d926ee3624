package processor

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
)

// TestHealthBeforeFirstLoop: while Run connects (here to a broker that is
// not there, which takes preflight seconds), the loop has not turned yet
// but is not stuck: /healthz passes and /readyz does not call it stuck.
func TestHealthBeforeFirstLoop(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now
	dec, err := codecs.NewDecoder(mapSource{}, codecs.Options{})
	require.NoError(t, err)
	p, err := New(Options{Brokers: []string{addr}, Group: "g", Topics: []string{"t"}, Decoder: dec,
		OpenStore: func(context.Context, string) (deltalog.Store, error) { return nil, nil }})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	require.Eventually(t, func() bool { return p.Status().Running }, 5*time.Second, time.Millisecond)
	s := p.Status()
	require.True(t, s.Alive(), "%v", s.problems())
	require.False(t, s.LastLoop.IsZero())
	for _, pr := range s.problems() {
		require.NotContains(t, pr, "stuck")
	}
	cancel()
	require.NoError(t, <-done)
	require.NoError(t, p.Close())
}
