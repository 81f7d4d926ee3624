package memstore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// Options configures a Store.
type Options struct {
	// Now stamps each write's ModTime; nil means time.Now. Tests of retention set it.
	Now func() time.Time
}

type object struct {
	data    []byte // never mutated after the write that stored it
	modTime time.Time
}

// Store is an in-memory deltalog.Store. It is safe for concurrent use; each operation is
// atomic, as on a real store with conditional puts.
type Store struct {
	now func() time.Time

	mu struct {
		sync.Mutex
		objects map[string]object
		keys    []string // sorted paths of objects
	}
}

var _ deltalog.Store = (*Store)(nil)

// New returns an empty Store.
func New(opts Options) *Store {
	s := &Store{now: opts.Now}
	if s.now == nil {
		s.now = time.Now
	}
	s.mu.objects = make(map[string]object)
	return s
}

// Clone returns a new Store holding the same objects: the durable state a restarted
// process would find.
func (s *Store) Clone() *Store {
	c := New(Options{Now: s.now})
	s.mu.Lock()
	defer s.mu.Unlock()
	maps.Copy(c.mu.objects, s.mu.objects)
	c.mu.keys = slices.Clone(s.mu.keys)
	return c
}

// SetModTime changes the modification time of an object, for tests of time-based
// retention. A missing object gives an error matching deltalog.ErrNotExist.
func (s *Store) SetModTime(p string, t time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.mu.objects[p]
	if !ok {
		return fmt.Errorf("memstore: set mod time %q: %w", p, deltalog.ErrNotExist)
	}
	o.modTime = t
	s.mu.objects[p] = o
	return nil
}

// Get returns the content of an object.
func (s *Store) Get(ctx context.Context, p string) (io.ReadCloser, error) {
	if err := deltalog.CheckPath(p); err != nil {
		return nil, fmt.Errorf("memstore: get: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	o, ok := s.mu.objects[p]
	s.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("memstore: get %q: %w", p, deltalog.ErrNotExist)
	}
	return io.NopCloser(bytes.NewReader(o.data)), nil
}

// Put stores an object, replacing any previous one.
func (s *Store) Put(ctx context.Context, p string, data []byte) error {
	return s.write(ctx, p, data, false)
}

// PutIfAbsent stores an object unless one exists at p, in which case it returns an error
// matching deltalog.ErrExist.
func (s *Store) PutIfAbsent(ctx context.Context, p string, data []byte) error {
	return s.write(ctx, p, data, true)
}

func (s *Store) write(ctx context.Context, p string, data []byte, ifAbsent bool) error {
	if err := deltalog.CheckPath(p); err != nil {
		return fmt.Errorf("memstore: put %q: %w", p, err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	_, exists := s.mu.objects[p]
	if exists && ifAbsent {
		s.mu.Unlock()
		return fmt.Errorf("memstore: put %q: %w", p, deltalog.ErrExist)
	}
	s.mu.objects[p] = object{data: bytes.Clone(data), modTime: s.now()}
	if !exists {
		i, _ := slices.BinarySearch(s.mu.keys, p)
		s.mu.keys = slices.Insert(s.mu.keys, i, p)
	}
	s.mu.Unlock()
	return nil
}

// Delete removes an object; a missing object is not an error.
func (s *Store) Delete(ctx context.Context, p string) error {
	if err := deltalog.CheckPath(p); err != nil {
		return fmt.Errorf("memstore: delete: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.mu.objects[p]; ok {
		delete(s.mu.objects, p)
		i, _ := slices.BinarySearch(s.mu.keys, p)
		s.mu.keys = slices.Delete(s.mu.keys, i, i+1)
	}
	return nil
}

// List yields the objects under prefix that sort after startAfter, in path order. It
// lists the objects present when iteration starts.
func (s *Store) List(ctx context.Context, prefix, startAfter string) iter.Seq2[deltalog.ObjectInfo, error] {
	return func(yield func(deltalog.ObjectInfo, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(deltalog.ObjectInfo{}, err)
			return
		}
		for _, info := range s.listed(prefix, startAfter) {
			if err := ctx.Err(); err != nil {
				yield(deltalog.ObjectInfo{}, err)
				return
			}
			if !yield(info, nil) {
				return
			}
		}
	}
}

// listed copies the matching entries so the caller can use the store while iterating.
func (s *Store) listed(prefix, startAfter string) []deltalog.ObjectInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := sort.SearchStrings(s.mu.keys, prefix)
	if startAfter >= prefix {
		i = sort.SearchStrings(s.mu.keys, startAfter)
		if i < len(s.mu.keys) && s.mu.keys[i] == startAfter {
			i++
		}
	}
	var out []deltalog.ObjectInfo
	for _, k := range s.mu.keys[i:] {
		if !strings.HasPrefix(k, prefix) {
			break
		}
		o := s.mu.objects[k]
		out = append(out, deltalog.ObjectInfo{Path: k, Size: int64(len(o.data)), ModTime: o.modTime})
	}
	return out
}
