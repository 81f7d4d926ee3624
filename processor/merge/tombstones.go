package merge

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// tombstoneJudgeConcurrency bounds the commits read at once to judge
// batch files.
const tombstoneJudgeConcurrency = 8

// tombstone remembers that key was deleted by the change at pos.
type tombstone struct {
	pos codecs.Position
	at  int64 // ms since the epoch when it was recorded
}

// tombstones is the hard-delete mode's memory of deleted keys, and of the
// latest truncate (floor): an event at or below either is obsolete. Only
// entries of committed batches count: a batch's file is written before its
// commit, so that a crash in between cannot lose it, but it counts only
// once the commit has landed and names it (tombstoneView). Entries are
// merged by taking the highest position.
type tombstones struct {
	keys  map[string]tombstone
	floor codecs.Position
	// files are the files judged, by path: merged into keys, or orphans (a
	// batch file whose version another commit took). A batch file above
	// the snapshot's version is judged at a later catch-up.
	files map[string]fileState
	// swept is the cutoff expired entries were last dropped at.
	swept int64
}

// tombstoneSweepMillis is how far the expiry cutoff moves between sweeps.
const tombstoneSweepMillis = 60_000

// fileState is what judging a tombstone file found.
type fileState uint8

const (
	fileMerged fileState = iota + 1 // it counts, and its entries are in keys
	fileOrphan                      // a batch file whose commit did not land
)

func newTombstones() *tombstones {
	return &tombstones{keys: map[string]tombstone{}, files: map[string]fileState{}}
}

// merge keeps the highest position per key and, for equal positions (a
// re-applied batch), the latest record time, so the entry expires last.
func (t *tombstones) merge(key string, ts tombstone) {
	if old, ok := t.keys[key]; ok {
		if c := old.pos.Compare(ts.pos); c > 0 || c == 0 && old.at >= ts.at {
			return
		}
	}
	t.keys[key] = ts
}

// obsolete reports whether an event at pos for key is covered by a tombstone.
func (t *tombstones) obsolete(key string, pos codecs.Position) bool {
	if pos.Compare(t.floor) <= 0 {
		return true
	}
	ts, ok := t.keys[key]
	return ok && pos.Compare(ts.pos) <= 0
}

// tombstoneCutoff is the record time (ms) below which a tombstone has expired.
func tombstoneCutoff(now time.Time, retention time.Duration) int64 {
	return now.Add(-retention).UnixMilli()
}

// tombstoneView is what batch files are judged against: a snapshot's
// version and the table whose commits name them.
type tombstoneView struct {
	table   *deltalog.Table
	version int64 // -1 before the table exists
}

// landed reports whether the commit of version, at or below the view's,
// names the batch file name. Only that commit can: the sink commits a
// batch with tombstones at exactly the version after its snapshot
// (deltalog.ExactVersion). A commit file that is gone was removed by log
// cleanup, after delta.logRetentionDuration (30 days by default), longer
// than any tombstone retention: its file counts, the safe side against
// resurrecting a row.
func (w tombstoneView) landed(ctx context.Context, version int64, name string) (bool, error) {
	ci, err := w.table.CommitInfo(ctx, version)
	if errors.Is(err, deltalog.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("judging tombstones %s: %w", name, err)
	}
	return ci != nil && deltalog.OperationValues(ci.Extra).Text(cdctable.TombstonesField) == name, nil
}

// loadTombstones reads every tombstone file that counts in view and drops
// expired entries.
func loadTombstones(ctx context.Context, store deltalog.Store, view tombstoneView, now time.Time, retention time.Duration) (*tombstones, error) {
	t := newTombstones()
	if err := t.catchUp(ctx, store, view, tombstoneCutoff(now, retention), nil); err != nil {
		return nil, err
	}
	return t, nil
}

// maxTombstoneRelists bounds how often catchUp lists again after files
// vanished under it; each round means a concurrent compaction finished.
const maxTombstoneRelists = 8

// catchUp drops entries recorded before cutoff and merges the files not
// judged yet that count in view. A file can vanish between listing and
// reading when a concurrent compaction replaced it; the compacted file was
// written before the delete, so listing again finds its entries. seen, if not
// nil, is given each key of the files merged. A failure leaves only counted
// entries merged.
func (t *tombstones) catchUp(ctx context.Context, store deltalog.Store, view tombstoneView, cutoff int64, seen func(key string)) error {
	// A sweep visits every entry, and writers that share a table catch up
	// after most of their commits: entries may outlive their expiry by a
	// minute, which only holds back older events of the key a little longer.
	if cutoff >= t.swept+tombstoneSweepMillis || cutoff < t.swept {
		for k, ts := range t.keys {
			if ts.at < cutoff {
				delete(t.keys, k)
			}
		}
		t.swept = cutoff
	}
	for range maxTombstoneRelists {
		listed := map[string]fileState{}
		var todo []string
		for info, err := range store.List(ctx, cdctable.TombstoneDir, "") {
			if err != nil {
				return fmt.Errorf("listing tombstones: %w", err)
			}
			if !strings.HasSuffix(info.Path, ".json") {
				continue
			}
			if st, ok := t.files[info.Path]; ok {
				listed[info.Path] = st
				continue
			}
			if v, ok := cdctable.TombstoneBatchVersion(strings.TrimPrefix(info.Path, cdctable.TombstoneDir)); ok && v > view.version {
				continue // a commit in flight, or one that failed
			}
			todo = append(todo, info.Path)
		}
		counts, err := view.judge(ctx, todo)
		if err != nil {
			return err
		}
		missing := false
		for i, path := range todo {
			if !counts[i] {
				listed[path] = fileOrphan
				continue
			}
			err := t.readFile(ctx, store, path, cutoff, seen)
			if errors.Is(err, deltalog.ErrNotExist) {
				missing = true
				continue
			}
			if err != nil {
				return err
			}
			listed[path] = fileMerged
		}
		// Forget files compacted away, so files stays the listing.
		t.files = listed
		if !missing {
			return nil
		}
	}
	return fmt.Errorf("reading tombstones: files kept vanishing after %d listings: %w", maxTombstoneRelists, deltalog.ErrNotExist)
}

// judge reports which of the files count in view, reading the commits of
// the batch files concurrently: on object stores each is a round trip.
func (w tombstoneView) judge(ctx context.Context, paths []string) ([]bool, error) {
	counts := make([]bool, len(paths))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(tombstoneJudgeConcurrency)
	for i, path := range paths {
		name := strings.TrimPrefix(path, cdctable.TombstoneDir)
		v, ok := cdctable.TombstoneBatchVersion(name)
		if !ok {
			counts[i] = true
			continue
		}
		g.Go(func() error {
			var err error
			counts[i], err = w.landed(gctx, v, name)
			return err
		})
	}
	return counts, g.Wait()
}

func (t *tombstones) readFile(ctx context.Context, store deltalog.Store, path string, cutoff int64, seen func(key string)) error {
	rc, err := store.Get(ctx, path)
	if err != nil {
		return fmt.Errorf("reading tombstones %s: %w", path, err)
	}
	defer rc.Close()
	sc := bufio.NewScanner(rc)
	sc.Buffer(nil, 1<<20)
	var (
		l       cdctable.TombstoneLine
		scratch []byte
	)
	for sc.Scan() {
		if err := cdctable.DecodeTombstoneLine(sc.Bytes(), &l, &scratch); err != nil {
			return fmt.Errorf("reading tombstones %s: %w", path, err)
		}
		pos, err := codecs.PositionFromHex(l.Pos)
		if err != nil {
			return fmt.Errorf("reading tombstones %s: %w", path, err)
		}
		if l.Floor {
			// A truncate never expires: it is one entry.
			if pos.Compare(t.floor) > 0 {
				t.floor = pos
			}
			continue
		}
		key := string(l.Key)
		if seen != nil {
			seen(key)
		}
		if l.At < cutoff {
			continue
		}
		t.merge(key, tombstone{pos: pos, at: l.At})
	}
	if err := sc.Err(); err != nil && err != io.EOF {
		return fmt.Errorf("reading tombstones %s: %w", path, err)
	}
	return nil
}

// writeTombstones stores a batch's new tombstones (and a new floor, if set)
// in a new file named after the version the batch is about to commit, the
// one after view's, and returns its name for the commit to name. One call
// in tombstoneCompactCheck, at random, also compacts the files if there
// are many: the Sink has no other hook between batches in steady state,
// and a random pick, unlike version numbers, cannot keep missing batches
// with deletes.
func writeTombstones(ctx context.Context, store deltalog.Store, view tombstoneView, keys map[string]tombstone, floor *codecs.Position) (string, error) {
	if len(keys) == 0 && floor == nil {
		return "", nil
	}
	name := cdctable.BatchTombstoneName(view.version + 1)
	if err := putTombstones(ctx, store, cdctable.TombstoneDir+name, keys, floor); err != nil {
		return "", err
	}
	if rand.IntN(tombstoneCompactCheck) == 0 {
		// Compaction only saves reads later; the files stay valid if it
		// fails, so its error must not fail the batch.
		_, _ = compactTombstoneFiles(ctx, store, view, tombstoneCompactFiles)
	}
	return name, nil
}

// writeFloor keeps the floor of a truncate that came before the table
// existed, for the table's creation to read (ADR 0025). No commit follows,
// so the file counts as it is: it only says that a truncate happened at
// floor.
func writeFloor(ctx context.Context, store deltalog.Store, floor *codecs.Position) error {
	if floor == nil {
		return nil
	}
	return putTombstones(ctx, store, cdctable.TombstoneDir+cdctable.TombstoneFloorPrefix+uuid.NewString()+".json", nil, floor)
}

func putTombstones(ctx context.Context, store deltalog.Store, path string, keys map[string]tombstone, floor *codecs.Position) error {
	data := encodeTombstones(keys, floor)
	if err := store.PutIfAbsent(ctx, path, data); err != nil {
		return fmt.Errorf("writing tombstones %s: %w", path, err)
	}
	return nil
}

// encodeTombstones renders a tombstone file: JSON lines, the floor first.
// The lines are the bytes encoding/json writes for cdctable.TombstoneLine
// (cdctable's TestEncodeTombstonesAsJSON), appended by hand: a batch's file is encoded
// again after each lost race and a compaction re-encodes every entry.
func encodeTombstones(keys map[string]tombstone, floor *codecs.Position) []byte {
	var buf []byte
	if floor != nil {
		buf = cdctable.AppendTombstoneLine(buf, "", *floor, 0, true)
	}
	for k, ts := range keys {
		buf = cdctable.AppendTombstoneLine(buf, k, ts.pos, ts.at, false)
	}
	return buf
}
