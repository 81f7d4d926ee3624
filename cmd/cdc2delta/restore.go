package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

func restoreCommand() command {
	return command{
		name:    "restore",
		args:    "TABLE",
		summary: "restore the table to an earlier version or time, txn positions included (RESTORE)",
		example: "cdc2delta restore --version 12 ./tables/sales/dbo/orders\n" +
			"# the processor then replays each partition from the offsets version 12 had applied",
		flags: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			sf := addStoreFlags(fs, e)
			tt := addRestoreTargetFlags(fs)
			return func(ctx context.Context, args []string) error {
				loc, err := oneTable(args)
				if err != nil {
					return err
				}
				if !tt.set() {
					return usagef("give --version N or --timestamp T")
				}
				t, cur, err := sf.openLatest(ctx, loc)
				if err != nil {
					return err
				}
				target, err := tt.snapshot(ctx, t, loc)
				if err != nil {
					return err
				}
				res, m, err := restoreTo(ctx, t, cur, target, tt)
				if err != nil {
					return fmt.Errorf("restoring %s to version %d: %w", loc, target.Version(), err)
				}
				fmt.Fprintf(e.stdout, "restored %s to version %d as version %d: %s files removed, %s files restored, %s files now\n",
					loc, target.Version(), res.Version, m["numRemovedFiles"], m["numRestoredFiles"], m["numOfFilesAfterRestore"])
				return nil
			}
		},
	}
}

// fileKey identifies a logical file: its path and deletion vector.
func fileKey(path string, dv *deltalog.DeletionVector) string {
	if dv == nil {
		return path
	}
	return path + "\x00" + dv.UniqueID()
}

// restoreTo commits a RESTORE of target on top of cur, like Spark's RESTORE: files live
// now but not in target are removed, files of target missing now are re-added (both with
// dataChange=true), and the metadata comes back when it differs. Unlike Spark it also
// sets every txn appId back to target's version, so the processor resumes each Kafka
// partition from where target had it; an appId target lacks gets -1 (start from the
// beginning), since a txn cannot be deleted.
func restoreTo(ctx context.Context, t *deltalog.Table, cur, target *deltalog.Snapshot, tt *timeTravelFlags) (deltalog.CommitResult, map[string]string, error) {
	if target.Version() == cur.Version() {
		return deltalog.CommitResult{}, nil, usagef("the table is already at version %d", cur.Version())
	}
	now := map[string]bool{}
	for _, f := range cur.Files() {
		now[fileKey(f.Path, f.DeletionVector)] = true
	}
	want := map[string]bool{}
	for _, f := range target.Files() {
		want[fileKey(f.Path, f.DeletionVector)] = true
	}
	existing, err := listObjects(ctx, t.Store())
	if err != nil {
		return deltalog.CommitResult{}, nil, err
	}
	var actions []deltalog.Action
	var removedFiles, restoredFiles, removedSize, restoredSize, sizeAfter int64
	for _, f := range target.Files() {
		sizeAfter += f.Size
		if now[fileKey(f.Path, f.DeletionVector)] {
			continue
		}
		// Spark refuses to restore files VACUUM already deleted: the result would not be
		// the target version.
		for _, p := range referencedPaths(f.Path, f.DeletionVector) {
			if _, ok := existing[p]; !ok {
				return deltalog.CommitResult{}, nil, fmt.Errorf("file %s of version %d no longer exists (vacuumed?)", p, target.Version())
			}
		}
		add := f
		add.DataChange = true
		actions = append(actions, deltalog.Action{Add: &add})
		restoredFiles++
		restoredSize += f.Size
	}
	for _, f := range cur.Files() {
		if want[fileKey(f.Path, f.DeletionVector)] {
			continue
		}
		size := f.Size
		actions = append(actions, deltalog.Action{Remove: &deltalog.Remove{
			Path: f.Path, DataChange: true, ExtendedFileMetadata: true, PartitionValues: f.PartitionValues,
			Size: &size, Tags: f.Tags, DeletionVector: f.DeletionVector,
			BaseRowID: f.BaseRowID, DefaultRowCommitVersion: f.DefaultRowCommitVersion,
		}})
		removedFiles++
		removedSize += f.Size
	}
	if tm, cm := target.Metadata(), cur.Metadata(); !sameMetadata(tm, cm) {
		actions = append(actions, deltalog.Action{Metadata: &tm})
		if p := deltalog.UpgradeProtocol(cur.Protocol(), target.Protocol()); !p.Equal(cur.Protocol()) {
			actions = append(actions, deltalog.Action{Protocol: &p})
		}
	}
	targetTxns, curTxns := target.Txns(), cur.Txns()
	for _, id := range slices.Sorted(maps.Keys(curTxns)) {
		v := int64(-1)
		if x, ok := targetTxns[id]; ok {
			v = x.Version
		}
		if v != curTxns[id].Version {
			actions = append(actions, deltalog.Action{Txn: &deltalog.Txn{AppID: id, Version: v}})
		}
	}
	params := map[string]string{"version": strconv.FormatInt(target.Version(), 10)}
	if tt.timestamp != "" {
		ts, _ := json.Marshal(tt.timestamp) // a string always marshals
		params["timestamp"] = string(ts)
		delete(params, "version")
	}
	metrics := map[string]string{
		"tableSizeAfterRestore":  strconv.FormatInt(sizeAfter, 10),
		"numOfFilesAfterRestore": strconv.Itoa(target.NumFiles()),
		"numRemovedFiles":        strconv.FormatInt(removedFiles, 10),
		"numRestoredFiles":       strconv.FormatInt(restoredFiles, 10),
		"removedFilesSize":       strconv.FormatInt(removedSize, 10),
		"restoredFilesSize":      strconv.FormatInt(restoredSize, 10),
	}
	res, err := t.Commit(ctx, cur, actions, deltalog.Operation{Name: deltalog.OpRestore, Parameters: params, Metrics: metrics},
		deltalog.ReadWholeTable())
	return res, metrics, err
}

func sameMetadata(a, b deltalog.Metadata) bool {
	return a.ID == b.ID && a.Name == b.Name && a.Description == b.Description && a.SchemaString == b.SchemaString &&
		slices.Equal(a.PartitionColumns, b.PartitionColumns) && maps.Equal(a.Configuration, b.Configuration)
}

// listObjects returns every object under the table root by path.
func listObjects(ctx context.Context, s deltalog.Store) (map[string]deltalog.ObjectInfo, error) {
	out := map[string]deltalog.ObjectInfo{}
	for o, err := range s.List(ctx, "", "") {
		if err != nil {
			return nil, fmt.Errorf("listing the table: %w", err)
		}
		out[o.Path] = o
	}
	return out, nil
}
