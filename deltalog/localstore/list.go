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
	key  string // path relative to the root; directories end in "/"
	info os.FileInfo
}

// walk lists directory rel ("" or ending in "/") depth first. Sorting each directory by
// key, with "/" appended to subdirectory names, yields paths in global byte order: every
// path inside a subdirectory starts with its key, so no other entry sorts between them.
// It reports whether to continue.
func (s *Store) walk(ctx context.Context, rel, prefix, startAfter string, yield func(deltalog.ObjectInfo, error) bool) bool {
	if err := ctx.Err(); err != nil {
		return yield(deltalog.ObjectInfo{}, err)
	}
	names, err := readNames(s.file(rel))
	if err != nil {
		if isNotExist(err) {
			return true
		}
		return yield(deltalog.ObjectInfo{}, fmt.Errorf("localstore: listing %q: %w", rel, err))
	}
	// Names that sort before startAfter, as a file and as a directory that
	// does not hold it, are dropped before anything is stat'ed, built or
	// sorted: a log listed after its latest version, as every commit does,
	// then costs one read of the names, however long a log the table keeps.
	var after string
	if strings.HasPrefix(startAfter, rel) {
		after = startAfter[len(rel):]
	}
	var entries []entry
	for _, name := range names {
		if after != "" && before(name, after) {
			continue
		}
		info, err := os.Lstat(s.file(rel + name))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue // deleted since the directory was read
			}
			return yield(deltalog.ObjectInfo{}, fmt.Errorf("localstore: listing %q: %w", rel+name, err))
		}
		key := rel + name
		if info.IsDir() {
			key += "/"
		} else if !strings.HasPrefix(key, prefix) && !strings.HasPrefix(prefix, key) {
			continue
		}
		entries = append(entries, entry{key: key, info: info})
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
		if e.info.IsDir() {
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
		info := e.info
		if !info.Mode().IsRegular() {
			continue
		}
		if !yield(deltalog.ObjectInfo{Path: e.key, Size: info.Size(), ModTime: info.ModTime()}, nil) {
			return false
		}
	}
	return true
}

// readNames reads the names in directory dir, unsorted: walk sorts the few
// it keeps.
func readNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// before reports whether name, as a directory (name + "/") and so as a file
// too, sorts before after without holding it.
func before(name, after string) bool {
	if len(after) > len(name) && strings.HasPrefix(after, name) {
		return after[len(name)] > '/'
	}
	return name < after
}
