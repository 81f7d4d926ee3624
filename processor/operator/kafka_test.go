package operator

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestKafkaCall: only a request its own deadline ended is ErrKafkaNoAnswer,
// naming kafka.brokers; the caller's cancellation or deadline and the
// request's own errors pass through unchanged.
func TestKafkaCall(t *testing.T) {
	hang := func(ctx context.Context) (int, error) { <-ctx.Done(); return 0, ctx.Err() }
	failed := errors.New("broker said no")
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name     string
		ctx      context.Context
		fn       func(context.Context) (int, error)
		noAnswer bool
		want     error
	}{
		{"answers", t.Context(), func(context.Context) (int, error) { return 7, nil }, false, nil},
		{"fails", t.Context(), func(context.Context) (int, error) { return 0, failed }, false, failed},
		{"never answers", t.Context(), hang, true, context.DeadlineExceeded},
		{"caller cancelled", cancelled, hang, false, context.Canceled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			n, err := kafkaCall(tc.ctx, 50*time.Millisecond, tc.fn)
			require.Less(t, time.Since(start), 5*time.Second)
			require.ErrorIs(t, err, tc.want)
			require.Equal(t, tc.noAnswer, errors.Is(err, ErrKafkaNoAnswer), "%v", err)
			if tc.noAnswer {
				require.ErrorContains(t, err, "no answer from kafka.brokers within 50ms")
			}
			if err == nil {
				require.Equal(t, 7, n)
			}
		})
	}
}
