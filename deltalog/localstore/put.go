package localstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// Put writes an object atomically, replacing any previous one.
func (s *Store) Put(ctx context.Context, p string, data []byte) error {
	if err := s.put(ctx, p, data, false); err != nil {
		return fmt.Errorf("localstore: put %q: %w", p, err)
	}
	return nil
}

// PutIfAbsent writes an object atomically unless one exists at p, in which case it
// returns an error matching deltalog.ErrExist.
func (s *Store) PutIfAbsent(ctx context.Context, p string, data []byte) error {
	if err := s.put(ctx, p, data, true); err != nil {
		return fmt.Errorf("localstore: put-if-absent %q: %w", p, err)
	}
	return nil
}

func (s *Store) put(ctx context.Context, p string, data []byte, ifAbsent bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := deltalog.CheckPath(p); err != nil {
		return err
	}
	name := s.file(p)
	dir := filepath.Dir(name)
	if err := s.mkdirAll(dir); err != nil {
		return err
	}
	tmp, err := s.writeTemp(dir, filepath.Base(name), data)
	if err != nil {
		return err
	}
	if !ifAbsent {
		if err := os.Rename(tmp, name); err != nil {
			removeQuietly(tmp)
			return err
		}
		return s.syncDir(dir)
	}
	err = s.link(tmp, name)
	removeQuietly(tmp)
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrExist):
		return deltalog.ErrExist
	case linkUnsupported(err):
		if err := s.createExclusive(name, data); err != nil {
			return err
		}
	default:
		return err
	}
	return s.syncDir(dir)
}

// writeTemp writes data to a new hidden file in dir and returns its name. The leading dot
// makes Delta readers, and VACUUM, ignore it if a crash leaves it behind.
func (s *Store) writeTemp(dir, base string, data []byte) (string, error) {
	f, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	err = writeAndClose(f, data, !s.noSync)
	if err == nil {
		// CreateTemp makes 0600 files; objects should be readable like any written file.
		err = os.Chmod(tmp, 0o644)
	}
	if err != nil {
		removeQuietly(tmp)
		return "", err
	}
	return tmp, nil
}

// createExclusive is the fallback for file systems without hard links (some FUSE, SMB
// and FAT mounts). O_EXCL keeps the create-if-absent guarantee, but the name is visible
// before its content is complete, so a concurrent reader could see a short commit; a
// crash mid-write leaves it short for good. It is used only where link is refused.
func (s *Store) createExclusive(name string, data []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return deltalog.ErrExist
		}
		return err
	}
	if err := writeAndClose(f, data, !s.noSync); err != nil {
		removeQuietly(name)
		return err
	}
	return nil
}

func writeAndClose(f *os.File, data []byte, sync bool) error {
	_, err := f.Write(data)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// linkUnsupported reports the errors file systems give when they have no hard links.
func linkUnsupported(err error) bool {
	return errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.ENOTSUP) ||
		errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS) ||
		errors.Is(err, syscall.EMLINK)
}

// mkdirAll creates dir and its missing parents, fsyncing the parent of each directory it
// creates so that the new entries are durable too.
func (s *Store) mkdirAll(dir string) error {
	st, err := os.Stat(dir)
	if err == nil {
		if !st.IsDir() {
			return fmt.Errorf("%s is not a directory", dir)
		}
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := s.mkdirAll(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return s.syncDir(parent)
}

func (s *Store) syncDir(dir string) error {
	if s.noSync {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// removeQuietly deletes a temporary file. A failure only leaves a hidden file that
// readers ignore, so it is not reported.
func removeQuietly(name string) {
	_ = os.Remove(name) // best effort, see above
}
