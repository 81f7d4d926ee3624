package tableops

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// VacuumOptions configure [Vacuum].
type VacuumOptions struct {
	// Retention keeps the files removed or written within it. Nil: the table's
	// delta.deletedFileRetentionDuration (7 days when unset).
	Retention *time.Duration
	// SkipRetentionCheck allows a Retention shorter than the table's, which can break
	// readers of older versions and concurrent writers; without it Vacuum refuses such a
	// retention with a *RetentionError.
	SkipRetentionCheck bool
	// DryRun finds the files to delete and returns them, deleting and committing nothing.
	DryRun bool
	// Now is the time the retention counts back from. Zero: time.Now().
	Now time.Time
	// Keep are object paths kept besides those snap references: the source's files
	// its shallow clones name (FilesOfSource).
	Keep map[string]bool
	// Listed, if set, is called once the files are listed and before anything is
	// committed or deleted. A writer in this process waits there for its commit in
	// flight: a file the listing saw that the commit adds is then referenced by the
	// VACUUM START version, and kept, however long the commit took.
	Listed func()
}

// keepFile adds the store keys of a logical file to keep. A file or deletion vector
// named by absolute URI might lie under the table root or not; VACUUM cannot match it
// to the listed objects, and guessing wrong deletes data a retained version needs, so
// it refuses the table instead. (Snapshots already refuse live files with absolute
// paths; removed ones and "p" deletion vectors get here.)
func keepFile(keep map[string]bool, key deltalog.FileKey, path string, dv *deltalog.DeletionVector) error {
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
	for _, p := range referencedPaths(key, dv) {
		keep[p] = true
	}
	return nil
}

// VacuumResult is what a VACUUM deleted or, in a dry run, would delete.
type VacuumResult struct {
	// Retention is the retention applied.
	Retention time.Duration
	// Files are the paths to delete, in listing order; a VACUUM that failed part way
	// deleted the first NumDeletedFiles of them.
	Files []string
	// SizeOfDataToDelete is the size of Files in bytes.
	SizeOfDataToDelete int64
	// NumDeletedFiles counts the files deleted; none in a dry run.
	NumDeletedFiles int
	// NumVacuumedDirectories counts the directories Files are in.
	NumVacuumedDirectories int
	// Version is the VACUUM END commit; 0 in a dry run.
	Version int64
}

// Vacuum deletes the files under the table root that neither a live file nor an
// unexpired tombstone of snap references and that were last modified before
// now-retention, as Spark's VACUUM does, and records the run as VACUUM START and
// VACUUM END commits. Files a retained version needs are safe: a version within the
// retention window only reads live files or files whose remove is younger than the
// retention, and those are tombstones the snapshot still holds. The log and hidden
// files and directories (names starting with "_" or ".") are never touched, except
// _change_data.
//
// A delete that fails stops the run: VACUUM END records status FAILED, and the error
// comes with the result so far.
func Vacuum(ctx context.Context, t *deltalog.Table, snap *deltalog.Snapshot, opts VacuumOptions) (VacuumResult, error) {
	tableRetention := snap.Metadata().DeletedFileRetention()
	res := VacuumResult{Retention: tableRetention}
	if opts.Retention != nil {
		res.Retention = *opts.Retention
	}
	if res.Retention < tableRetention && !opts.SkipRetentionCheck {
		return VacuumResult{}, &RetentionError{Retention: res.Retention, TableRetention: tableRetention}
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	cutoff := now.Add(-res.Retention)
	keep, err := referenced(snap, cutoff)
	if err != nil {
		return VacuumResult{}, err
	}
	var listed []deltalog.ObjectInfo
	for o, err := range t.Store().List(ctx, "", "") {
		if err != nil {
			return VacuumResult{}, fmt.Errorf("listing the table: %w", err)
		}
		if hiddenPath(o.Path) || keep[o.Path] || opts.Keep[o.Path] || !o.ModTime.Before(cutoff) {
			continue
		}
		listed = append(listed, o)
	}
	if opts.DryRun {
		res.add(listed, nil)
		return res, nil
	}
	if opts.Listed != nil {
		opts.Listed()
	}

	params := map[string]string{
		"retentionCheckEnabled":  strconv.FormatBool(res.Retention >= tableRetention),
		"defaultRetentionMillis": strconv.FormatInt(tableRetention.Milliseconds(), 10),
	}
	if opts.Retention != nil {
		params["specifiedRetentionMillis"] = strconv.FormatInt(res.Retention.Milliseconds(), 10)
	}
	// The two commits carry no data and read none: a concurrent writer's
	// commits never conflict with them (a file it references is live, or
	// younger than the retention, and kept).
	blind := deltalog.ReadFiles()
	var listedSize int64
	for _, o := range listed {
		listedSize += o.Size
	}
	start, err := t.Commit(ctx, snap, nil, deltalog.Operation{Name: deltalog.OpVacuumStart, Parameters: params, Metrics: map[string]string{
		"numFilesToDelete": strconv.Itoa(len(listed)), "sizeOfDataToDelete": strconv.FormatInt(listedSize, 10),
	}}, blind)
	if err != nil {
		return VacuumResult{}, fmt.Errorf("committing VACUUM START: %w", err)
	}
	// Commits that landed since snap (VACUUM START was rebased over them) may
	// reference listed files, written long before their commit: keep those.
	startSnap, err := t.SnapshotAt(ctx, start.Version)
	if err != nil {
		return VacuumResult{}, fmt.Errorf("reading version %d: %w", start.Version, err)
	}
	var since map[string]bool
	if startSnap.Version() > snap.Version()+1 {
		if since, err = referenced(startSnap, cutoff); err != nil {
			return VacuumResult{}, err
		}
	}
	res.add(listed, since)
	status := "COMPLETED"
	var delErr error
	for _, p := range res.Files {
		if delErr = t.Store().Delete(ctx, p); delErr != nil {
			status = "FAILED"
			break
		}
		res.NumDeletedFiles++
	}
	end, err := t.Commit(ctx, startSnap, nil, deltalog.Operation{Name: deltalog.OpVacuumEnd,
		Parameters: map[string]string{"status": status},
		Metrics: map[string]string{
			"numDeletedFiles": strconv.Itoa(res.NumDeletedFiles), "numVacuumedDirectories": strconv.Itoa(res.NumVacuumedDirectories),
		}}, blind)
	if err != nil {
		return res, fmt.Errorf("committing VACUUM END: %w", err)
	}
	res.Version = end.Version
	if delErr != nil {
		return res, fmt.Errorf("deleting files (%d of %d deleted): %w", res.NumDeletedFiles, len(res.Files), delErr)
	}
	return res, nil
}

// referenced lists the store keys snap's live files reference, and its
// tombstones younger than cutoff: the snapshot holds the removes younger than
// the table's retention, and a shorter retention releases those older than
// the cutoff.
func referenced(snap *deltalog.Snapshot, cutoff time.Time) (map[string]bool, error) {
	keep := map[string]bool{}
	for _, f := range snap.Files() {
		if err := keepFile(keep, f.Key(), f.Path, f.DeletionVector); err != nil {
			return nil, err
		}
	}
	for _, r := range snap.Tombstones() {
		if r.DeletionTimestamp == nil || time.UnixMilli(*r.DeletionTimestamp).After(cutoff) {
			if err := keepFile(keep, r.Key(), r.Path, r.DeletionVector); err != nil {
				return nil, err
			}
		}
	}
	return keep, nil
}

// add takes the listed objects but those in keep as the files to delete.
func (r *VacuumResult) add(listed []deltalog.ObjectInfo, keep map[string]bool) {
	dirs := map[string]bool{}
	for _, o := range listed {
		if keep[o.Path] {
			continue
		}
		r.Files = append(r.Files, o.Path)
		r.SizeOfDataToDelete += o.Size
		dirs[path.Dir(o.Path)] = true
	}
	r.NumVacuumedDirectories = len(dirs)
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
