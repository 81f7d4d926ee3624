package main

import (
	"context"
	"flag"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// defaultDeletedFileRetention is delta.deletedFileRetentionDuration's default.
const defaultDeletedFileRetention = 7 * 24 * time.Hour

func vacuumCommand() command {
	return command{
		name:    "vacuum",
		args:    "TABLE",
		summary: "delete files no live version references and older than the retention (VACUUM)",
		example: "cdc2delta vacuum --dry-run ./tables/sales/dbo/orders\ncdc2delta vacuum --retain 336h s3://lake/sales/dbo/orders",
		flags: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			sf := addStoreFlags(fs, e)
			var retain durationFlag
			fs.Var(&retain, "retain", "keep files removed or written within this `duration`, e.g. 336h (default: the table's\n"+
				"delta.deletedFileRetentionDuration, 7 days (168h) when the table does not set it)")
			dryRun := fs.Bool("dry-run", false, "list the files that would be deleted, delete nothing")
			force := fs.Bool("force", false, "allow a retention shorter than the table's (breaks time travel and concurrent readers)")
			return func(ctx context.Context, args []string) error {
				loc, err := oneTable(args)
				if err != nil {
					return err
				}
				t, snap, err := sf.openLatest(ctx, loc)
				if err != nil {
					return err
				}
				tableRetention := tableFileRetention(snap.Metadata().Configuration)
				retention := tableRetention
				if retain.set {
					retention = retain.d
				}
				if retention < tableRetention && !*force {
					return usagef("--retain %s is shorter than the table's delta.deletedFileRetentionDuration (%s): "+
						"readers of older versions and concurrent writers could lose files; add --force to do it anyway",
						retention, tableRetention)
				}
				return vacuum(ctx, e, t, snap, vacuumPlan{
					retention: retention, tableRetention: tableRetention, specified: retain.set,
					dryRun: *dryRun, now: time.Now(),
				})
			}
		},
	}
}

// tableFileRetention reads delta.deletedFileRetentionDuration ("interval 7 days").
func tableFileRetention(conf map[string]string) time.Duration {
	if d, ok := parseInterval(conf[deltalog.PropDeletedFileRetention]); ok {
		return d
	}
	return defaultDeletedFileRetention
}

// parseInterval parses Delta's "interval N unit [N unit ...]" properties; months and
// years have no fixed length and are refused, as Delta does.
func parseInterval(s string) (time.Duration, bool) {
	f := strings.Fields(strings.ToLower(s))
	if len(f) > 0 && f[0] == "interval" {
		f = f[1:]
	}
	if len(f) == 0 || len(f)%2 != 0 {
		return 0, false
	}
	units := map[string]time.Duration{
		"microsecond": time.Microsecond, "millisecond": time.Millisecond, "second": time.Second,
		"minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour, "week": 7 * 24 * time.Hour,
	}
	var total time.Duration
	for i := 0; i < len(f); i += 2 {
		n, err := strconv.ParseInt(f[i], 10, 64)
		u, ok := units[strings.TrimSuffix(f[i+1], "s")]
		if err != nil || !ok || n < 0 {
			return 0, false
		}
		total += time.Duration(n) * u
	}
	return total, true
}

type vacuumPlan struct {
	retention, tableRetention time.Duration
	specified, dryRun         bool
	now                       time.Time
}

// hiddenPath reports paths VACUUM never touches: the log and any file or directory whose
// name starts with "_" or ".", except change data files (Spark vacuums _change_data too).
func hiddenPath(p string) bool {
	if strings.HasPrefix(p, "_change_data/") {
		return false
	}
	for seg := range strings.SplitSeq(p, "/") {
		if strings.HasPrefix(seg, "_") || strings.HasPrefix(seg, ".") {
			return true
		}
	}
	return false
}

// keepFile adds the store keys of a logical file to keep. A file or deletion vector named
// by absolute URI might lie under the table root or not; VACUUM cannot match it to the
// listed objects, and guessing wrong deletes data a retained version needs, so it
// refuses the table instead. (Snapshots already refuse live files with absolute paths;
// removed ones and "p" deletion vectors get here.)
func keepFile(keep map[string]bool, path string, dv *deltalog.DeletionVector) error {
	abs := ""
	switch {
	case deltalog.IsAbsolutePath(path):
		abs = path
	case dv != nil && dv.StorageType == deltalog.DVStoragePath:
		abs = dv.PathOrInlineDV
	}
	if abs != "" {
		return fmt.Errorf("file %q of a retained version is named by absolute path: VACUUM cannot tell "+
			"whether it lies under the table, so it deletes nothing; vacuum this table with Spark", abs)
	}
	for _, p := range referencedPaths(path, dv) {
		keep[p] = true
	}
	return nil
}

// vacuum deletes the files under the table root that neither a live file nor an
// unexpired tombstone of snap references and that were last modified before
// now-retention, as Spark's VACUUM does. Files a retained version needs are safe: a
// version within the retention window only reads live files or files whose remove is
// younger than the retention, and those are tombstones the snapshot still holds.
func vacuum(ctx context.Context, e *env, t *deltalog.Table, snap *deltalog.Snapshot, plan vacuumPlan) error {
	keep := map[string]bool{}
	for _, f := range snap.Files() {
		if err := keepFile(keep, f.Path, f.DeletionVector); err != nil {
			return err
		}
	}
	cutoff := plan.now.Add(-plan.retention)
	for _, r := range snap.Tombstones() {
		// The snapshot holds the removes younger than the table's retention; a forced
		// shorter retention releases those older than the cutoff.
		if r.DeletionTimestamp == nil || time.UnixMilli(*r.DeletionTimestamp).After(cutoff) {
			if err := keepFile(keep, r.Path, r.DeletionVector); err != nil {
				return err
			}
		}
	}
	var doomed []deltalog.ObjectInfo
	var size int64
	dirs := map[string]bool{}
	for o, err := range t.Store().List(ctx, "", "") {
		if err != nil {
			return fmt.Errorf("listing the table: %w", err)
		}
		if hiddenPath(o.Path) || keep[o.Path] || !o.ModTime.Before(cutoff) {
			continue
		}
		doomed = append(doomed, o)
		size += o.Size
		dirs[path.Dir(o.Path)] = true
	}
	if plan.dryRun {
		for _, o := range doomed {
			fmt.Fprintln(e.stdout, o.Path)
		}
		fmt.Fprintf(e.stdout, "would delete %s (%s) older than %s\n", plural(len(doomed), "file"), humanBytes(size), plan.retention)
		return nil
	}
	params := map[string]string{
		"retentionCheckEnabled":  strconv.FormatBool(plan.retention >= plan.tableRetention),
		"defaultRetentionMillis": strconv.FormatInt(plan.tableRetention.Milliseconds(), 10),
	}
	if plan.specified {
		params["specifiedRetentionMillis"] = strconv.FormatInt(plan.retention.Milliseconds(), 10)
	}
	start, err := t.Commit(ctx, snap, nil, deltalog.Operation{Name: deltalog.OpVacuumStart, Parameters: params, Metrics: map[string]string{
		"numFilesToDelete": strconv.Itoa(len(doomed)), "sizeOfDataToDelete": strconv.FormatInt(size, 10),
	}})
	if err != nil {
		return fmt.Errorf("committing VACUUM START: %w", err)
	}
	deleted, status := 0, "COMPLETED"
	var delErr error
	for _, o := range doomed {
		if delErr = t.Store().Delete(ctx, o.Path); delErr != nil {
			status = "FAILED"
			break
		}
		deleted++
	}
	endSnap, err := t.SnapshotAt(ctx, start.Version)
	if err != nil {
		return fmt.Errorf("reading version %d: %w", start.Version, err)
	}
	dirList := slices.Sorted(func(yield func(string) bool) {
		for d := range dirs {
			if !yield(d) {
				return
			}
		}
	})
	if _, err := t.Commit(ctx, endSnap, nil, deltalog.Operation{Name: deltalog.OpVacuumEnd,
		Parameters: map[string]string{"status": status},
		Metrics: map[string]string{
			"numDeletedFiles": strconv.Itoa(deleted), "numVacuumedDirectories": strconv.Itoa(len(dirList)),
		}}); err != nil {
		return fmt.Errorf("committing VACUUM END: %w", err)
	}
	if delErr != nil {
		return fmt.Errorf("deleting files (%d of %d deleted): %w", deleted, len(doomed), delErr)
	}
	fmt.Fprintf(e.stdout, "deleted %s (%s) older than %s\n", plural(deleted, "file"), humanBytes(size), plan.retention)
	return nil
}
