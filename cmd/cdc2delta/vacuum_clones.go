package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
)

// shallowCloneFiles returns the files of the table t that the shallow clones recorded
// in it (clone without --deep) still name, for VACUUM to keep. A recorded clone that no
// longer exists is reported and passed over; one that cannot be read stops the VACUUM,
// which could otherwise delete files the clone reads.
func shallowCloneFiles(ctx context.Context, sf *storeFlags, e *env, t *deltalog.Table) (map[string]bool, error) {
	recs, err := tableops.ShallowClones(ctx, t.Store())
	if err != nil || len(recs) == 0 {
		return nil, err
	}
	base, err := tableops.SourceURI(t.Store())
	if err != nil {
		return nil, err
	}
	keep := map[string]bool{}
	for _, rec := range recs {
		clone, err := sf.openReader(ctx, rec.Location)
		if !strings.Contains(rec.Location, "://") {
			if _, serr := os.Stat(rec.Location); errors.Is(serr, fs.ErrNotExist) {
				err = deltalog.ErrNotExist
			}
		}
		var snap *deltalog.Snapshot
		if err == nil {
			snap, err = clone.Snapshot(ctx)
		}
		if errors.Is(err, deltalog.ErrNotExist) {
			fmt.Fprintf(e.stderr, "shallow clone %s (recorded in %s) no longer exists; delete the record to stop this notice\n", rec.Location, rec.Path)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading the shallow clone %s recorded in %s, whose files VACUUM must keep "+
				"(delete the record if the clone is gone): %w", rec.Location, rec.Path, err)
		}
		files, err := tableops.FilesOfSource(snap, base)
		if err != nil {
			return nil, err
		}
		for p := range files {
			keep[p] = true
		}
		fmt.Fprintf(e.stdout, "keeping %s that the shallow clone %s names\n", plural(len(files), "file"), rec.Location)
	}
	return keep, nil
}
