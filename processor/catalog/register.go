package catalog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cdc2delta/cdc2delta/internal/deadline"
)

// Outcome is what one registration did.
type Outcome string

// Outcomes, as `cdc2delta catalog sync` prints them and the
// cdc2delta_catalog_registrations_total metric counts them.
const (
	Created   Outcome = "created"
	Updated   Outcome = "updated"
	Unchanged Outcome = "unchanged"
	Conflict  Outcome = "conflict"
	Failed    Outcome = "error"
)

// Register makes the catalog's entry of want.Name record want: it looks
// the name up, creates the entry when absent, and updates it only when
// Differences finds something. A name held by another location or by a
// table that is not Delta is a *ConflictError and is never overwritten.
// Each call to the catalog runs under timeout (named dependency in the
// error when it did not answer).
func Register(ctx context.Context, c Catalog, want Entry, timeout time.Duration, dependency string) (Outcome, []string, error) {
	call := func(what string, fn func(context.Context) error) error {
		err := deadline.Run(ctx, timeout, dependency, fn)
		if err != nil && errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, ErrUnavailable) && ctx.Err() == nil {
			err = fmt.Errorf("%s %s: %w: %w", what, want.Name, ErrUnavailable, err)
		}
		return err
	}
	var got Entry
	err := call("looking up", func(ctx context.Context) (err error) { got, err = c.Lookup(ctx, want.Name); return err })
	if errors.Is(err, ErrNotFound) {
		err = call("creating", func(ctx context.Context) error { return c.Create(ctx, want) })
		if err == nil {
			return Created, nil, nil
		}
		if !errors.Is(err, ErrExists) {
			return Failed, nil, err
		}
		// Another writer created it meanwhile: compare with theirs.
		err = call("looking up", func(ctx context.Context) (err error) { got, err = c.Lookup(ctx, want.Name); return err })
	}
	if err != nil {
		return Failed, nil, err
	}
	if got.Format != "" && got.Format != FormatDelta {
		return Conflict, nil, &ConflictError{Name: want.Name, Location: got.Location, Want: want.Location, Format: got.Format}
	}
	if !SameLocation(got.Location, want.Location) {
		return Conflict, nil, &ConflictError{Name: want.Name, Location: got.Location, Want: want.Location}
	}
	diff := Differences(want, got)
	if len(diff) == 0 {
		return Unchanged, nil, nil
	}
	// Keep what others recorded (owner tags) beside what cdc2delta sets.
	up := want
	up.Properties = map[string]string{}
	for k, v := range got.Properties {
		up.Properties[k] = v
	}
	for k, v := range want.Properties {
		up.Properties[k] = v
	}
	if err := call("updating", func(ctx context.Context) error { return c.Update(ctx, up) }); err != nil {
		return Failed, diff, err
	}
	return Updated, diff, nil
}
