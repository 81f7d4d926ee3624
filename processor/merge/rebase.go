package merge

import (
	"context"
	"errors"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// errReplan means a commit lost its version to a writer whose commits
// touched what the batch read: the batch must be planned again (ADR 0036).
var errReplan = errors.New("merge: a concurrent commit touched the batch's keys or files")

// replanError says what made a rebase give up.
type replanError struct {
	version int64 // the version the batch was rebased onto
	reason  string
}

func (e *replanError) Error() string {
	return fmt.Sprintf("%v: at version %d, %s", errReplan, e.version, e.reason)
}

func (e *replanError) Unwrap() error { return errReplan }

// lookups is what a plan found of its keys: the file and row of each key's
// live row, or none.
type lookups struct {
	keys  []string
	paths []string
	rows  []uint32
	found []bool
}

func newLookups(x *keyIndex, keys []string, locs []rowLoc, found []bool) lookups {
	l := lookups{keys: keys, paths: make([]string, len(keys)), rows: make([]uint32, len(keys)), found: found}
	for i, loc := range locs {
		if found[i] {
			l.paths[i], l.rows[i] = x.files[loc.file], loc.row
		}
	}
	return l
}

// commit commits the batch's actions after op's snapshot. A version lost to
// concurrent commits that touched nothing the batch read costs a rebase:
// the same actions are committed after the winners, with no new plan.
func (s *Sink) commit(ctx context.Context, p *mergePlan, actions []deltalog.Action, op *deltalog.Operation, copts []deltalog.CommitOption, truncating bool, res *Result) (deltalog.CommitResult, error) {
	snap := p.st.snap
	for {
		cr, err := s.table.Commit(ctx, snap, actions, *op, copts...)
		if err == nil || !errors.Is(err, deltalog.ErrExist) || res.Rebases >= s.opts.CommitRetries {
			return cr, err
		}
		if snap, err = s.rebase(ctx, p, actions, op, truncating); err != nil {
			return cr, err
		}
		res.Rebases++
		s.log.Debug("rebased the batch onto concurrent commits", "version", snap.Version(), "rebases", res.Rebases)
	}
}

// rebase catches the state up to the latest version and returns it when
// the batch's plan still holds there: the txn versions of its partitions,
// the files it removes, the rows of its keys and their tombstones are as
// the plan saw them. Otherwise it returns an error matching errReplan. A
// batch's tombstone file is written again, named after the new version.
func (s *Sink) rebase(ctx context.Context, p *mergePlan, actions []deltalog.Action, op *deltalog.Operation, truncating bool) (*deltalog.Snapshot, error) {
	old := p.st.snap
	if old == nil || truncating || len(p.truncated) > 0 {
		return nil, &replanError{version: -1, reason: "the batch creates the table or truncates it"}
	}
	for _, a := range actions {
		if a.Metadata != nil || a.Protocol != nil {
			return nil, &replanError{version: old.Version(), reason: "the batch changes the table's schema"}
		}
	}
	tombs := s.state.tombs
	floor := tombs.floor
	seen := make(map[string]tombstone, len(p.lookedUp.keys))
	for _, k := range p.lookedUp.keys {
		if ts, ok := tombs.keys[k]; ok {
			seen[k] = ts
		}
	}
	if err := s.catchUp(ctx); err != nil {
		if errors.Is(err, errCatchUpUnsupported) {
			return nil, &replanError{version: old.Version(), reason: err.Error()}
		}
		return nil, err
	}
	cur := s.state.snap
	now, readded := filesByPath(cur), p.readded()
	redo, reason, err := s.planHolds(ctx, p, actions, readded, old, now, floor, seen)
	if err == nil && reason == "" && len(redo) > 0 {
		reason, err = s.redoDVs(ctx, p, readded, now, redo)
	}
	if err != nil || reason != "" {
		if err == nil {
			err = &replanError{version: cur.Version(), reason: reason}
		}
		return nil, err
	}
	if p.tombFile != "" {
		name, err := writeTombstones(ctx, s.opts.Store, tombstoneView{s.table, cur.Version()}, p.tombs, nil)
		if err != nil {
			return nil, err
		}
		// The old file is named after a version another commit took, so it
		// never counts; removing it only saves a read.
		_ = s.opts.Store.Delete(ctx, cdctable.TombstoneDir+p.tombFile)
		p.tombFile, op.Extra[cdctable.TombstonesField] = name, name
	}
	return cur, nil
}

// planHolds returns why p's plan, made on old, does not hold on the files
// now, or "" when it does, with the files whose deletion vectors the plan
// updates and other writers updated too (redoDVs).
func (s *Sink) planHolds(ctx context.Context, p *mergePlan, actions []deltalog.Action, readded map[string]*deltalog.Add, old *deltalog.Snapshot, now map[string]*deltalog.Add, floor codecs.Position, seen map[string]tombstone) (redo []string, reason string, err error) {
	cur := s.state.snap
	for _, a := range actions {
		if a.Txn == nil {
			continue
		}
		was, _ := old.TxnVersion(a.Txn.AppID)
		if v, _ := cur.TxnVersion(a.Txn.AppID); v != was {
			return nil, fmt.Sprintf("another writer committed offsets of %s", a.Txn.AppID), nil
		}
	}
	for _, a := range p.removes {
		path := a.Remove.Path
		n := now[path]
		switch {
		case n == nil:
			return nil, "another writer removed " + path, nil
		case sameDV(p.files[path].DeletionVector, n.DeletionVector):
		case readded[path] != nil:
			redo = append(redo, path)
		default:
			return nil, "another writer changed " + path + ", which the batch rewrites", nil
		}
	}
	x, l := s.state.index, p.lookedUp
	locs, found, err := x.lookup(l.keys, newLiveCheck(ctx, x, now, deltalog.NewDVReader(s.opts.Store)))
	if err != nil {
		return nil, "", fmt.Errorf("table %s: looking up keys again: %w", s.opts.TableName, err)
	}
	for i, k := range l.keys {
		if found[i] != l.found[i] || found[i] && (x.files[locs[i].file] != l.paths[i] || locs[i].row != l.rows[i]) {
			return nil, "another writer changed a key of the batch", nil
		}
		if ts, ok := s.state.tombs.keys[k]; ok {
			if was, had := seen[k]; !had || ts.pos.Compare(was.pos) > 0 {
				return nil, "another writer deleted a key of the batch", nil
			}
		}
	}
	if s.state.tombs.floor.Compare(floor) != 0 {
		return nil, "another writer truncated the table", nil
	}
	return redo, "", nil
}

// redoDVs writes again the deletion vectors of files that other writers
// marked rows in since the plan: each becomes the union of theirs and the
// plan's, which is only right while the two mark different rows.
func (s *Sink) redoDVs(ctx context.Context, p *mergePlan, readded, now map[string]*deltalog.Add, paths []string) (string, error) {
	bitmaps := make([]*roaring64.Bitmap, len(paths))
	for i, path := range paths {
		was, cur := p.files[path], now[path]
		theirs, err := p.dvs.Read(ctx, cur.DeletionVector)
		if err != nil {
			return "", fmt.Errorf("reading deletion vector of %s: %w", path, err)
		}
		before := roaring64.New()
		if was.DeletionVector != nil {
			if before, err = p.dvs.Read(ctx, was.DeletionVector); err != nil {
				return "", fmt.Errorf("reading deletion vector of %s: %w", path, err)
			}
		}
		ours := p.dels[path] // the plan's deletes, with the vector it saw
		if !roaring64.AndNot(before, theirs).IsEmpty() || roaring64.AndNot(ours, before).Intersects(theirs) {
			return "another writer deleted rows of " + path + " the batch deletes", nil
		}
		bitmaps[i] = roaring64.Or(ours, theirs)
		if allGone(cur, bitmaps[i]) {
			return "the rows of " + path + " are all deleted", nil
		}
	}
	descs, err := deltalog.WriteDeletionVectors(ctx, s.opts.Store, "", bitmaps)
	if err != nil {
		return "", fmt.Errorf("writing deletion vectors of %s: %w", s.opts.TableName, err)
	}
	for i, path := range paths {
		for _, a := range p.removes {
			if a.Remove.Path == path {
				*a.Remove = *now[path].Remove(true)
			}
		}
		readded[path].DeletionVector = &descs[i]
		p.files[path], p.dels[path] = now[path], bitmaps[i]
	}
	return "", nil
}

// readded are the files the plan adds again with a new deletion vector.
func (p *mergePlan) readded() map[string]*deltalog.Add {
	out := map[string]*deltalog.Add{}
	for _, a := range p.adds {
		if a.Add != nil && a.Add.DeletionVector != nil && p.files[a.Add.Path] != nil {
			out[a.Add.Path] = a.Add
		}
	}
	return out
}

// filesByPath indexes snap's files by path.
func filesByPath(snap *deltalog.Snapshot) map[string]*deltalog.Add {
	files := snap.Files()
	out := make(map[string]*deltalog.Add, len(files))
	for i := range files {
		out[files[i].Path] = &files[i]
	}
	return out
}
