package processor

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
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
	files int
}

type tombstoneLine struct {
	Key   []byte `json:"k,omitempty"`
	Pos   string `json:"p"`
	At    int64  `json:"t"`
	Floor bool   `json:"f,omitempty"`
}

func (t *tombstones) merge(key string, ts tombstone) {
	if old, ok := t.keys[key]; ok && old.pos.Compare(ts.pos) >= 0 {
		return
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

// loadTombstones reads every tombstone file and drops expired entries.
func loadTombstones(ctx context.Context, store deltalog.Store, now time.Time, retention time.Duration) (*tombstones, error) {
	t := &tombstones{keys: map[string]tombstone{}}
	cutoff := now.Add(-retention).UnixMilli()
	for info, err := range store.List(ctx, tombstoneDir, "") {
		if err != nil {
			return nil, fmt.Errorf("listing tombstones: %w", err)
		}
		if !strings.HasSuffix(info.Path, ".json") {
			continue
		}
		t.files++
		if err := t.readFile(ctx, store, info.Path, cutoff); err != nil {
			return nil, err
		}
	}
	return t, nil
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

// write stores new tombstones (and a new floor, if set) in a new file named
// after the version the batch is about to commit.
func writeTombstones(ctx context.Context, store deltalog.Store, version int64, keys map[string]tombstone, floor *codecs.Position) error {
	if len(keys) == 0 && floor == nil {
		return nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	if floor != nil {
		if err := enc.Encode(tombstoneLine{Pos: floor.Hex(), Floor: true}); err != nil {
			return err
		}
	}
	for k, ts := range keys {
		if err := enc.Encode(tombstoneLine{Key: []byte(k), Pos: ts.pos.Hex(), At: ts.at}); err != nil {
			return err
		}
	}
	path := fmt.Sprintf("%s%020d-%s.json", tombstoneDir, version, uuid.NewString())
	if err := store.PutIfAbsent(ctx, path, buf.Bytes()); err != nil {
		return fmt.Errorf("writing tombstones %s: %w", path, err)
	}
	return nil
}
