// Package backoff is the one retry delay of cdc2delta: exponential, doubling
// from Min up to Max, with jitter so that many retriers spread out. Each
// layer picks its bounds (a commit race retries in milliseconds, an outage in
// seconds); the shape is the same everywhere.
package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Policy bounds the delays. Attempt n (0-based) waits a random time between
// half and all of min(Min·2ⁿ, Max).
type Policy struct {
	Min, Max time.Duration
}

// Delay is the wait before retry attempt n.
func (p Policy) Delay(n int) time.Duration {
	d := p.Max
	if n < 40 && p.Min > 0 {
		if s := p.Min << n; s > 0 && s < p.Max {
			d = s
		}
	}
	if d <= 0 {
		return 0
	}
	return d/2 + rand.N(d/2+1)
}

// Wait sleeps Delay(n), or until ctx ends: then it returns ctx's cause.
func (p Policy) Wait(ctx context.Context, n int) error { return Sleep(ctx, p.Delay(n)) }

// Sleep waits d, or until ctx ends: then it returns ctx's cause.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}
