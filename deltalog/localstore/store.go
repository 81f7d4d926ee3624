// Package localstore is a deltalog.Store on a local (POSIX) file system, rooted at the
// table directory.
//
// Writes go to a temporary file in the destination directory that is fsynced before it
// becomes visible, so a reader never sees a half-written object, even after a crash.
// Put publishes it with rename (which replaces). PutIfAbsent publishes it with a hard
// link, which fails with EEXIST if the name is taken; rename cannot be used because it
// silently replaces the target, and O_CREAT|O_EXCL makes the name visible before the
// content is written. delta-rs (object_store) commits the same way. The directory is
// fsynced after each publish so the new name survives a power loss.
package localstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// Options configures a Store.
type Options struct {
	// Dir is the table root directory. It need not exist: writes create directories.
	Dir string
	// NoSync skips the fsync of files and directories. Writes stay atomic for readers
	// but may be lost on power failure. Default false; use only for tests and benchmarks.
	NoSync bool
}

// Store is a deltalog.Store on the local file system. It is safe for concurrent use,
// also by several processes sharing the directory.
type Store struct {
	root   string
	noSync bool
	link   func(oldname, newname string) error // os.Link; tests simulate file systems without links
}

var _ deltalog.Store = (*Store)(nil)

// New returns a Store rooted at opts.Dir.
func New(opts Options) (*Store, error) {
	if opts.Dir == "" {
		return nil, errors.New("localstore: Options.Dir is empty")
	}
	root, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("localstore: resolving %q: %w", opts.Dir, err)
	}
	return &Store{root: root, noSync: opts.NoSync, link: os.Link}, nil
}

// Root returns the absolute path of the table directory.
func (s *Store) Root() string { return s.root }

func (s *Store) file(p string) string {
	return filepath.Join(s.root, filepath.FromSlash(p))
}

// Get opens an object. A missing object, or a directory, gives an error matching
// deltalog.ErrNotExist.
func (s *Store) Get(ctx context.Context, p string) (io.ReadCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := deltalog.CheckPath(p); err != nil {
		return nil, fmt.Errorf("localstore: get: %w", err)
	}
	f, err := os.Open(s.file(p))
	if err != nil {
		if isNotExist(err) {
			return nil, fmt.Errorf("localstore: get %q: %w", p, deltalog.ErrNotExist)
		}
		return nil, fmt.Errorf("localstore: get %q: %w", p, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("localstore: get %q: %w", p, err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("localstore: get %q: not a regular file: %w", p, deltalog.ErrNotExist)
	}
	return f, nil
}

// Delete removes an object; a missing object is not an error.
func (s *Store) Delete(ctx context.Context, p string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := deltalog.CheckPath(p); err != nil {
		return fmt.Errorf("localstore: delete: %w", err)
	}
	name := s.file(p)
	st, err := os.Lstat(name)
	if err != nil {
		if isNotExist(err) {
			return nil
		}
		return fmt.Errorf("localstore: delete %q: %w", p, err)
	}
	if st.IsDir() {
		// A directory is not an object, so as far as the Store contract goes p is missing.
		return nil
	}
	if err := os.Remove(name); err != nil && !isNotExist(err) {
		return fmt.Errorf("localstore: delete %q: %w", p, err)
	}
	return nil
}

// isNotExist also treats ENOTDIR (a path component is a file) as a missing object.
func isNotExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}
