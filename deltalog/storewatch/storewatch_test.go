package storewatch

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// TestWatchdog: an operation that reports progress more often than its timeout
// is never cut, however long it runs; one that goes silent for the timeout is,
// and then reports the store's error wrapped with ErrUnavailable.
func TestWatchdog(t *testing.T) {
	const timeout = 100 * time.Millisecond
	storeErr := errors.New("the store's timeout error")
	tests := []struct {
		name   string
		kicks  int // progress reports, timeout/2 apart
		cut    bool
		wantIs []error
	}{
		{name: "silent", kicks: 0, cut: true, wantIs: []error{deltalog.ErrUnavailable, storeErr}},
		{name: "progressing", kicks: 6, cut: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, w := Start(t.Context(), timeout, storeErr)
			defer w.Stop()
			for range tc.kicks {
				time.Sleep(timeout / 2)
				require.NoError(t, ctx.Err(), "cut although it made progress")
				w.Kick()
			}
			if !tc.cut {
				require.NoError(t, ctx.Err())
				require.NoError(t, w.TimedOut(nil))
				require.ErrorIs(t, w.TimedOut(context.Canceled), context.Canceled)
				return
			}
			select {
			case <-ctx.Done():
			case <-time.After(10 * timeout):
				t.Fatalf("a silent operation still runs after %s", 10*timeout)
			}
			err := w.TimedOut(ctx.Err())
			for _, want := range tc.wantIs {
				require.ErrorIs(t, err, want)
			}
			require.NoError(t, w.TimedOut(nil), "no error stays no error")
		})
	}
}
