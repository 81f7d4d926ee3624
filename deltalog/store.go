package deltalog

import (
	"bytes"
	"context"
	"errors"
	"io"
	"iter"
	"time"
)

// ObjectInfo describes one stored object. Path is relative to the store root.
type ObjectInfo struct {
	Path    string
	Size    int64
	ModTime time.Time
}

// Store is the storage a table lives in, rooted at the table directory. Paths are
// slash-separated and relative to that root ("_delta_log/00000000000000000000.json").
// Implementations live in subpackages (localstore, s3store, memstore).
type Store interface {
	// Get opens an object. A missing object gives an error matching ErrNotExist.
	Get(ctx context.Context, path string) (io.ReadCloser, error)
	// Put writes an object, replacing any previous content. Writers never expose a
	// partially written object.
	Put(ctx context.Context, path string, data []byte) error
	// PutIfAbsent writes an object only if none exists at path, atomically; otherwise it
	// returns an error matching ErrExist. Commits rely on it.
	PutIfAbsent(ctx context.Context, path string, data []byte) error
	// List yields the objects whose path starts with prefix and sorts after startAfter
	// (empty: from the first), in ascending lexicographic order of path.
	List(ctx context.Context, prefix, startAfter string) iter.Seq2[ObjectInfo, error]
	// Delete removes an object; deleting a missing object is not an error.
	Delete(ctx context.Context, path string) error
}

// Holds reports whether the object at p has exactly the content data. Object
// stores call it when a put-if-absent was refused, to tell their own earlier
// attempt (retried by their SDK after a lost answer) from another writer's
// object. An object deleted since is not theirs.
func Holds(ctx context.Context, s Store, p string, data []byte) (bool, error) {
	rc, err := s.Get(ctx, p)
	if errors.Is(err, ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer rc.Close()
	got, err := io.ReadAll(io.LimitReader(rc, int64(len(data))+1))
	if err != nil {
		return false, err
	}
	return bytes.Equal(got, data), nil
}
