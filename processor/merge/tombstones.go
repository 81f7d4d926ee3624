package merge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
)

// tombstoneDir holds delete tombstones beside the table; Delta readers and
// VACUUM ignore directories starting with '_' (ADR 0022).
const tombstoneDir = "_cdc2delta/tombstones/"

// tombstone remembers that key was deleted by the change at pos.
type tombstone struct {
	pos codecs.Position
	at  int64 // ms since the epoch when it was recorded
}

// tombstones is the hard-delete mode's memory of deleted keys, and of the
// latest truncate (floor): an event at or below either is obsolete. Each
// entry is a claim that holds whether or not the batch that wrote it was
// committed, so the files are written before the commit and merged by
// taking the highest position.
type tombstones struct {
	keys  map[string]tombstone
	floor codecs.Position
	// read are the files merged into keys, so a catch-up reads only new ones.
	read map[string]bool
}

type tombstoneLine struct {
	Key   []byte `json:"k,omitempty"`
	Pos   string `json:"p"`
	At    int64  `json:"t"`
	Floor bool   `json:"f,omitempty"`
}

func newTombstones() *tombstones {
	return &tombstones{keys: map[string]tombstone{}, read: map[string]bool{}}
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

// loadTombstones reads every tombstone file and drops expired entries.
func loadTombstones(ctx context.Context, store deltalog.Store, now time.Time, retention time.Duration) (*tombstones, error) {
	t := newTombstones()
	if err := t.catchUp(ctx, store, tombstoneCutoff(now, retention)); err != nil {
		return nil, err
	}
	return t, nil
}

// maxTombstoneRelists bounds how often catchUp lists again after files
// vanished under it; each round means a concurrent compaction finished.
const maxTombstoneRelists = 8

// catchUp drops entries recorded before cutoff and merges the files not
// read yet. A file can vanish between listing and reading when a concurrent
// compaction replaced it; the compacted file was written before the delete,
// so listing again finds its entries.
func (t *tombstones) catchUp(ctx context.Context, store deltalog.Store, cutoff int64) error {
	for k, ts := range t.keys {
		if ts.at < cutoff {
			delete(t.keys, k)
		}
	}
	for range maxTombstoneRelists {
		listed := map[string]bool{}
		missing := false
		for info, err := range store.List(ctx, tombstoneDir, "") {
			if err != nil {
				return fmt.Errorf("listing tombstones: %w", err)
			}
			if !strings.HasSuffix(info.Path, ".json") {
				continue
			}
			if t.read[info.Path] {
				listed[info.Path] = true
				continue
			}
			err := t.readFile(ctx, store, info.Path, cutoff)
			if errors.Is(err, deltalog.ErrNotExist) {
				missing = true
				continue
			}
			if err != nil {
				return err
			}
			listed[info.Path] = true
		}
		// Forget files compacted away, so read stays the listing.
		t.read = listed
		if !missing {
			return nil
		}
	}
	return fmt.Errorf("reading tombstones: files kept vanishing after %d listings: %w", maxTombstoneRelists, deltalog.ErrNotExist)
}

func (t *tombstones) readFile(ctx context.Context, store deltalog.Store, path string, cutoff int64) error {
	rc, err := store.Get(ctx, path)
	if err != nil {
		return fmt.Errorf("reading tombstones %s: %w", path, err)
	}
	defer rc.Close()
	sc := bufio.NewScanner(rc)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l tombstoneLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
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
		if l.At < cutoff {
			continue
		}
		t.merge(string(l.Key), tombstone{pos: pos, at: l.At})
	}
	if err := sc.Err(); err != nil && err != io.EOF {
		return fmt.Errorf("reading tombstones %s: %w", path, err)
	}
	return nil
}

// writeTombstones stores new tombstones (and a new floor, if set) in a new
// file named after the version the batch is about to commit. One call in
// tombstoneCompactCheck, at random, also compacts the files if there are
// many: the Sink has no other hook between batches in steady state, and a
// random pick, unlike version numbers, cannot keep missing batches with
// deletes.
func writeTombstones(ctx context.Context, store deltalog.Store, version int64, keys map[string]tombstone, floor *codecs.Position) error {
	if len(keys) == 0 && floor == nil {
		return nil
	}
	data, err := encodeTombstones(keys, floor)
	if err != nil {
		return err
	}
	path := fmt.Sprintf("%s%020d-%s.json", tombstoneDir, version, uuid.NewString())
	if err := store.PutIfAbsent(ctx, path, data); err != nil {
		return fmt.Errorf("writing tombstones %s: %w", path, err)
	}
	if rand.IntN(tombstoneCompactCheck) == 0 {
		// Compaction only saves reads later; the files stay valid if it
		// fails, so its error must not fail the batch.
		_, _ = compactTombstoneFiles(ctx, store, tombstoneCompactFiles)
	}
	return nil
}

// encodeTombstones renders a tombstone file: JSON lines, the floor first.
func encodeTombstones(keys map[string]tombstone, floor *codecs.Position) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	if floor != nil {
		if err := enc.Encode(tombstoneLine{Pos: floor.Hex(), Floor: true}); err != nil {
			return nil, err
		}
	}
	for k, ts := range keys {
		if err := enc.Encode(tombstoneLine{Key: []byte(k), Pos: ts.pos.Hex(), At: ts.at}); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}
