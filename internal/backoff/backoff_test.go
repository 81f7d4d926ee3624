package backoff

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestDelay(t *testing.T) {
	p := Policy{Min: 100 * time.Millisecond, Max: 30 * time.Second}
	for _, tc := range []struct {
		n      int
		lo, hi time.Duration
	}{
		{0, 50 * time.Millisecond, 100 * time.Millisecond},
		{1, 100 * time.Millisecond, 200 * time.Millisecond},
		{8, 12800 * time.Millisecond, 25600 * time.Millisecond},
		{9, 15 * time.Second, 30 * time.Second}, // capped
		{1000, 15 * time.Second, 30 * time.Second},
	} {
		for range 200 {
			d := p.Delay(tc.n)
			require.GreaterOrEqual(t, d, tc.lo, "attempt %d", tc.n)
			require.LessOrEqual(t, d, tc.hi, "attempt %d", tc.n)
		}
	}
	require.Zero(t, Policy{}.Delay(3))
}

func TestWaitEndsWithContext(t *testing.T) {
	cause := errors.New("revoked")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	require.ErrorIs(t, Policy{Min: time.Hour, Max: time.Hour}.Wait(ctx, 0), cause)
	require.NoError(t, Policy{Min: time.Millisecond, Max: time.Millisecond}.Wait(context.Background(), 5))
}
