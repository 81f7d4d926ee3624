// Package deadline bounds a call to a dependency (a broker, a registry, a
// store): a call that outlives its deadline fails with an error that names the
// dependency and matches context.DeadlineExceeded, which callers retry as
// transient (ADR 0026).
package deadline

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Run runs fn with a deadline of d. When the deadline, not ctx,
// ended it, the error names the dependency that did not answer and matches
// context.DeadlineExceeded: a transient error, retried within the budget.
// A hung dependency thus never holds its caller longer than d.
func Run(ctx context.Context, d time.Duration, dependency string, fn func(context.Context) error) error {
	dctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return NoAnswer(dctx, fn(dctx), dependency, d)
}

// NoAnswer is err, naming dependency when ctx's own deadline of d ended it.
func NoAnswer(ctx context.Context, err error, dependency string, d time.Duration) error {
	if err == nil || !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return err
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("%w: %w", err, context.DeadlineExceeded)
	}
	return fmt.Errorf("%w (no answer from %s within %s)", err, dependency, d)
}
