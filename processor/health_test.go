package processor

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
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

// TestHealthOtherProblems: Options.Problems' lines fail /readyz and are in
// its body, beside the processor's own.
func TestHealthOtherProblems(t *testing.T) {
	dec, err := codecs.NewDecoder(mapSource{}, codecs.Options{})
	require.NoError(t, err)
	var others []string
	p, err := New(Options{Brokers: []string{"127.0.0.1:1"}, Group: "g", Topics: []string{"t"}, Decoder: dec,
		OpenStore: func(context.Context, string) (deltalog.Store, error) { return nil, nil },
		Problems:  func() []string { return others }})
	require.NoError(t, err)
	defer p.Close()
	readyz := func() (int, string) {
		rec := httptest.NewRecorder()
		p.Handler(nil).ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
		return rec.Code, rec.Body.String()
	}
	_, body := readyz()
	require.NotContains(t, body, "control table")
	others = []string{"control table not kept: it refuses the transaction topic"}
	code, body := readyz()
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Contains(t, body, "control table not kept: it refuses the transaction topic")
	require.Contains(t, p.Status().problems(), "control table not kept: it refuses the transaction topic")
}
