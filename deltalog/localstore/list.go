package localstore

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"slices"
	"strings"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// List yields the regular files under prefix that sort after startAfter, in the byte
// order of their slash-separated paths (the order S3 lists keys in). It reads only the
// directories that can hold matching paths.
func (s *Store) List(ctx context.Context, prefix, startAfter string) iter.Seq2[deltalog.ObjectInfo, error] {
	return func(yield func(deltalog.ObjectInfo, error) bool) {
		// Start at the deepest directory the prefix names.
		dir := prefix[:strings.LastIndexByte(prefix, '/')+1]
		if dir != "" {
			if err := deltalog.CheckPath(strings.TrimSuffix(dir, "/")); err != nil {
				yield(deltalog.ObjectInfo{}, fmt.Errorf("localstore: listing %q: %w", prefix, err))
				return
			}
		}
		s.walk(ctx, dir, prefix, startAfter, yield)
	}
}

type entry struct {
	key string // path relative to the root; directories end in "/"
	de  os.DirEntry
}

// walk lists directory rel ("" or ending in "/") depth first. Sorting each directory by
// key, with "/" appended to subdirectory names, yields paths in global byte order: every
// path inside a subdirectory starts with its key, so no other entry sorts between them.
// It reports whether to continue.
func (s *Store) walk(ctx context.Context, rel, prefix, startAfter string, yield func(deltalog.ObjectInfo, error) bool) bool {
	if err := ctx.Err(); err != nil {
		return yield(deltalog.ObjectInfo{}, err)
	}
	des, err := os.ReadDir(s.file(rel))
	if err != nil {
		if isNotExist(err) {
			return true
		}
		return yield(deltalog.ObjectInfo{}, fmt.Errorf("localstore: listing %q: %w", rel, err))
	}
	entries := make([]entry, len(des))
	for i, de := range des {
		key := rel + de.Name()
		if de.IsDir() {
			key += "/"
		}
		entries[i] = entry{key: key, de: de}
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.key, b.key) })

	for _, e := range entries {
		related := strings.HasPrefix(e.key, prefix) || strings.HasPrefix(prefix, e.key)
		if !related {
			if e.key > prefix {
				return true // all later entries sort past the prefix too
			}
			continue
		}
		if e.de.IsDir() {
			// Every path in the subtree starts with e.key; if e.key sorts before
			// startAfter without being its prefix, the whole subtree does.
			if e.key < startAfter && !strings.HasPrefix(startAfter, e.key) {
				continue
			}
			if !s.walk(ctx, e.key, prefix, startAfter, yield) {
				return false
			}
			continue
		}
		if !strings.HasPrefix(e.key, prefix) || e.key <= startAfter {
			continue
		}
		info, err := e.de.Info()
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue // deleted since ReadDir
			}
			return yield(deltalog.ObjectInfo{}, fmt.Errorf("localstore: listing %q: %w", e.key, err))
		}
		if !info.Mode().IsRegular() {
			continue
		}
		if !yield(deltalog.ObjectInfo{Path: e.key, Size: info.Size(), ModTime: info.ModTime()}, nil) {
			return false
		}
	}
	return true
}
