package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cdc2delta/cdc2delta/config"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/processor/control"
)

// controlCatchUpTimeout bounds the wait for the control table to reach the tables:
// many times control.interval (1s in the quickstart's configuration).
const controlCatchUpTimeout = 30 * time.Second

// waitControl waits until the control table at controlPath names, for every table in
// paths, the table's current version, so the `status --group` the quickstart prints
// shows the cut of everything applied. It fails when the processor stops first
// (finished closes) or after controlCatchUpTimeout.
func waitControl(ctx context.Context, controlPath string, paths map[string]string, finished <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, controlCatchUpTimeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if controlReached(ctx, controlPath, paths) {
			return nil
		}
		select {
		case <-finished:
			return fmt.Errorf("the processor stopped before the control table at %s reached the tables", controlPath)
		case <-ctx.Done():
			return fmt.Errorf("the control table at %s did not reach the tables' versions within %s: %w", controlPath, controlCatchUpTimeout, ctx.Err())
		case <-tick.C:
		}
	}
}

// controlReached says whether the control table exists and records each table at
// its current version or later (a table not created yet needs no record).
func controlReached(ctx context.Context, controlPath string, paths map[string]string) bool {
	open := storeOpener(config.Storage{})
	st, err := open(ctx, controlPath)
	if err != nil {
		return false
	}
	ctl, err := control.OpenExisting(ctx, st)
	if err != nil {
		return false // not created yet
	}
	state, err := ctl.Read(ctx)
	if err != nil {
		return false
	}
	recorded := map[string]int64{}
	for _, r := range state.Tables {
		recorded[r.TablePath] = r.DeltaVersion
	}
	for _, path := range paths {
		st, err := open(ctx, path)
		if err != nil {
			return false
		}
		t, err := deltalog.Open(ctx, st)
		if err != nil {
			return false
		}
		snap, err := t.Snapshot(ctx)
		if errors.Is(err, deltalog.ErrNotExist) {
			continue
		}
		if err != nil {
			return false
		}
		if v, ok := recorded[path]; !ok || v < snap.Version() {
			return false
		}
	}
	return true
}
