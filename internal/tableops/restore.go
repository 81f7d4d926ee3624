package tableops

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// RestoreOptions configure [Restore].
type RestoreOptions struct {
	// Timestamp is the time the caller chose the target by, as the user wrote it; the
	// commit records it instead of the target's version, as Spark does. Empty: the target
	// was chosen by version.
	Timestamp string
}

// RestoreMetrics are a RESTORE's results, Spark's operationMetrics.
type RestoreMetrics struct {
	// Version is the RESTORE commit.
	Version                int64
	TableSizeAfterRestore  int64
	NumOfFilesAfterRestore int
	NumRemovedFiles        int
	NumRestoredFiles       int
	RemovedFilesSize       int64
	RestoredFilesSize      int64
}

// operationMetrics renders m under Spark's names.
func (m RestoreMetrics) operationMetrics() map[string]string {
	return map[string]string{
		"tableSizeAfterRestore":  strconv.FormatInt(m.TableSizeAfterRestore, 10),
		"numOfFilesAfterRestore": strconv.Itoa(m.NumOfFilesAfterRestore),
		"numRemovedFiles":        strconv.Itoa(m.NumRemovedFiles),
		"numRestoredFiles":       strconv.Itoa(m.NumRestoredFiles),
		"removedFilesSize":       strconv.FormatInt(m.RemovedFilesSize, 10),
		"restoredFilesSize":      strconv.FormatInt(m.RestoredFilesSize, 10),
	}
}

// Restore commits a RESTORE of target on top of cur, like Spark's RESTORE: files live in
// cur but not in target are removed, files of target missing from cur are re-added (both
// with dataChange=true), and target's metadata comes back when it differs. Unlike Spark
// it also sets every txn appId back to target's version, so the processor resumes each
// Kafka partition from where target had it; an appId target lacks gets -1 (start from
// the beginning), since a txn cannot be deleted.
//
// A target equal to cur gives ErrSameVersion; a target file that no longer exists (a
// VACUUM deleted it) gives ErrFileGone, as Spark refuses it too.
func Restore(ctx context.Context, t *deltalog.Table, cur, target *deltalog.Snapshot, opts RestoreOptions) (RestoreMetrics, error) {
	if target.Version() == cur.Version() {
		return RestoreMetrics{}, fmt.Errorf("%w: version %d", ErrSameVersion, cur.Version())
	}
	curFiles, targetFiles := cur.Files(), target.Files()
	now := make(map[deltalog.FileKey]bool, len(curFiles))
	for _, f := range curFiles {
		now[f.Key()] = true
	}
	want := make(map[deltalog.FileKey]bool, len(targetFiles))
	for _, f := range targetFiles {
		want[f.Key()] = true
	}
	existing, err := listObjects(ctx, t.Store())
	if err != nil {
		return RestoreMetrics{}, err
	}
	m := RestoreMetrics{NumOfFilesAfterRestore: target.NumFiles()}
	var actions []deltalog.Action
	for _, f := range targetFiles {
		m.TableSizeAfterRestore += f.Size
		if now[f.Key()] {
			continue
		}
		for _, p := range referencedPaths(f.Key(), f.DeletionVector) {
			if _, ok := existing[p]; !ok {
				return RestoreMetrics{}, fmt.Errorf("%w: %s of version %d (vacuumed?)", ErrFileGone, p, target.Version())
			}
		}
		add := f
		add.DataChange = true
		actions = append(actions, deltalog.Action{Add: &add})
		m.NumRestoredFiles++
		m.RestoredFilesSize += f.Size
	}
	for _, f := range curFiles {
		if want[f.Key()] {
			continue
		}
		actions = append(actions, deltalog.Action{Remove: f.Remove(true)})
		m.NumRemovedFiles++
		m.RemovedFilesSize += f.Size
	}
	if tm := target.Metadata(); !tm.Equal(cur.Metadata()) {
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
	if opts.Timestamp != "" {
		ts, _ := json.Marshal(opts.Timestamp) // a string always marshals
		params = map[string]string{"timestamp": string(ts)}
	}
	res, err := t.Commit(ctx, cur, actions, deltalog.Operation{Name: deltalog.OpRestore, Parameters: params, Metrics: m.operationMetrics()},
		deltalog.ReadWholeTable())
	if err != nil {
		return RestoreMetrics{}, fmt.Errorf("committing RESTORE: %w", err)
	}
	m.Version = res.Version
	return m, nil
}
