package tableops

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// ShallowCloneDir holds, beside a source table's log, one record per shallow clone made
// of it by cdc2delta, so that VACUUM of the source keeps the files the clones name.
// Delta has no such record (Spark's VACUUM does not know a table's shallow clones);
// readers ignore the directory.
const ShallowCloneDir = "_cdc2delta/shallow_clones/"

// ShallowCloneRecord names one shallow clone of a table.
type ShallowCloneRecord struct {
	// Path is the record's object path in the source; set by ShallowClones.
	Path string `json:"-"`
	// Location is the clone's table location, as the clone command was given it.
	Location      string    `json:"location"`
	SourceVersion int64     `json:"sourceVersion"`
	Created       time.Time `json:"created"`
}

// RecordShallowClone writes rec into the source's store, under a name derived from the
// clone's location (a clone made again at the same location replaces the record).
func RecordShallowClone(ctx context.Context, src deltalog.Store, rec ShallowCloneRecord) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(rec.Location))
	p := ShallowCloneDir + hex.EncodeToString(sum[:8]) + ".json"
	if err := src.Put(ctx, p, data); err != nil {
		return fmt.Errorf("recording the shallow clone in the source (%s): %w", p, err)
	}
	return nil
}

// ShallowClones lists the shallow clones recorded in a source table's store.
func ShallowClones(ctx context.Context, src deltalog.Store) ([]ShallowCloneRecord, error) {
	var out []ShallowCloneRecord
	for o, err := range src.List(ctx, ShallowCloneDir, "") {
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", ShallowCloneDir, err)
		}
		if !strings.HasSuffix(o.Path, ".json") {
			continue
		}
		rc, err := src.Get(ctx, o.Path)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", o.Path, err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", o.Path, err)
		}
		var rec ShallowCloneRecord
		if err := json.Unmarshal(data, &rec); err != nil || rec.Location == "" {
			return nil, fmt.Errorf("%s is not a shallow clone record (remove it if no clone of this table exists): %v", o.Path, err)
		}
		rec.Path = o.Path
		out = append(out, rec)
	}
	return out, nil
}

// FilesOfSource returns the object paths, relative to the source whose files are named
// under sourceURI (SourceURI of its store), of the data files and deletion vectors a
// clone's snapshot references: its live files and the tombstones its own VACUUM keeps.
func FilesOfSource(snap *deltalog.Snapshot, sourceURI string) (map[string]bool, error) {
	root, prefix, err := deltalog.SplitAbsoluteURI(sourceURI + "/_")
	if err != nil {
		return nil, fmt.Errorf("the source's URI %q: %w", sourceURI, err)
	}
	prefix = strings.TrimSuffix(prefix, "_")
	out := map[string]bool{}
	add := func(p string) {
		if !deltalog.IsAbsolutePath(p) {
			return
		}
		r, key, err := deltalog.SplitAbsoluteURI(p)
		if err != nil || r != root {
			return
		}
		if rel, ok := strings.CutPrefix(key, prefix); ok {
			out[rel] = true
		}
	}
	both := func(p string, dv *deltalog.DeletionVector) {
		add(p)
		if dv != nil && dv.StorageType == deltalog.DVStoragePath {
			add(dv.PathOrInlineDV)
		}
	}
	for _, f := range snap.Files() {
		both(f.Path, f.DeletionVector)
	}
	for _, r := range snap.Tombstones() {
		both(r.Path, r.DeletionVector)
	}
	return out, nil
}
