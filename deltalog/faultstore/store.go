package faultstore

import (
	"context"
	"fmt"
	"io"
	"iter"
	"sync"
	"time"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// Store wraps a deltalog.Store and applies the installed faults to each call before (or,
// for AfterWrite, after) passing it on. It is safe for concurrent use if the wrapped store
// is.
type Store struct {
	inner deltalog.Store

	mu struct {
		sync.Mutex
		faults []*Injection
		calls  map[Op]int
	}
}

var _ deltalog.Store = (*Store)(nil)

// Wrap returns a Store that passes calls to inner, with no faults installed.
func Wrap(inner deltalog.Store) *Store {
	s := &Store{inner: inner}
	s.mu.calls = make(map[Op]int)
	return s
}

// Unwrap returns the wrapped store: the durable state a restarted process would find.
func (s *Store) Unwrap() deltalog.Store { return s.inner }

// Inject installs a fault. Faults apply in installation order; several may fire on one call.
func (s *Store) Inject(f Fault) *Injection {
	in := &Injection{fault: f, s: s}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.faults = append(s.mu.faults, in)
	return in
}

// Calls reports how many calls of the given operations the store has received, including
// failed ones.
func (s *Store) Calls(op Op) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for o, c := range s.mu.calls {
		if o&op != 0 {
			n += c
		}
	}
	return n
}

// Get opens an object.
func (s *Store) Get(ctx context.Context, p string) (io.ReadCloser, error) {
	if _, err := s.inject(ctx, OpGet, p); err != nil {
		return nil, err
	}
	return s.inner.Get(ctx, p)
}

// Put writes an object.
func (s *Store) Put(ctx context.Context, p string, data []byte) error {
	return s.write(ctx, OpPut, p, data, s.inner.Put)
}

// PutIfAbsent writes an object unless one exists at p.
func (s *Store) PutIfAbsent(ctx context.Context, p string, data []byte) error {
	return s.write(ctx, OpPutIfAbsent, p, data, s.inner.PutIfAbsent)
}

func (s *Store) write(ctx context.Context, op Op, p string, data []byte,
	put func(context.Context, string, []byte) error) error {
	after, err := s.inject(ctx, op, p)
	if err != nil {
		return err
	}
	if err := put(ctx, p, data); err != nil {
		return err
	}
	if after != nil {
		if after.Then != nil {
			after.Then()
		}
		return fmt.Errorf("faultstore: %s %q (written): %w", op, p, after.err())
	}
	return nil
}

// List yields the objects under prefix that sort after startAfter.
func (s *Store) List(ctx context.Context, prefix, startAfter string) iter.Seq2[deltalog.ObjectInfo, error] {
	return func(yield func(deltalog.ObjectInfo, error) bool) {
		if _, err := s.inject(ctx, OpList, prefix); err != nil {
			yield(deltalog.ObjectInfo{}, err)
			return
		}
		for info, err := range s.inner.List(ctx, prefix, startAfter) {
			if !yield(info, err) {
				return
			}
		}
	}
}

// Delete removes an object.
func (s *Store) Delete(ctx context.Context, p string) error {
	if _, err := s.inject(ctx, OpDelete, p); err != nil {
		return err
	}
	return s.inner.Delete(ctx, p)
}

// inject counts the call and applies the faults that fire for it. It returns the fault
// whose error must be reported after a write (AfterWrite), or the error to return now.
func (s *Store) inject(ctx context.Context, op Op, p string) (after *Fault, err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.mu.calls[op]++
	var firing []*Fault
	for _, in := range s.mu.faults {
		if in.matchLocked(op, p) {
			firing = append(firing, &in.fault)
		}
	}
	s.mu.Unlock()

	for _, f := range firing {
		if f.Delay > 0 {
			if err := sleep(ctx, f.Delay); err != nil {
				return nil, err
			}
		}
		switch {
		case f.DelayOnly:
			if f.Then != nil {
				f.Then()
			}
		case f.AfterWrite && op&OpWrite != 0:
			after = f
		default:
			if f.Then != nil {
				f.Then()
			}
			return nil, fmt.Errorf("faultstore: %s %q: %w", op, p, f.err())
		}
	}
	return after, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
