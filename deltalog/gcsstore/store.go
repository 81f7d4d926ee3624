package gcsstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strings"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// Store is a deltalog.Store on one GCS bucket and object name prefix. It is safe for
// concurrent use.
type Store struct {
	bucket     *storage.BucketHandle
	name       string        // the bucket's
	root       string        // object name prefix of the table root: "" or ending in "/"
	timeout    time.Duration // of each operation's watchdog
	maxRetries int           // of each operation's budget
	endpoint   string        // for errors
}

var _ deltalog.Store = (*Store)(nil)

// Root returns the table URL, "gs://bucket/prefix".
func (s *Store) Root() string {
	return "gs://" + s.name + "/" + strings.TrimSuffix(s.root, "/")
}

func (s *Store) object(p string) string { return s.root + p }

// Get opens an object. A missing object gives an error matching deltalog.ErrNotExist.
func (s *Store) Get(ctx context.Context, p string) (io.ReadCloser, error) {
	if err := deltalog.CheckPath(p); err != nil {
		return nil, fmt.Errorf("gcsstore: get: %w", err)
	}
	// The body is read under the same watchdog, stopped when it is closed.
	ctx, w := s.watch(ctx, "get", s.object(p))
	r, err := s.bucket.Object(s.object(p)).NewReader(ctx)
	if err != nil {
		w.Stop()
		if errors.Is(err, storage.ErrObjectNotExist) {
			return nil, fmt.Errorf("gcsstore: get %q: %w", p, deltalog.ErrNotExist)
		}
		return nil, fmt.Errorf("gcsstore: get %q: %w", p, classify(w.TimedOut(err)))
	}
	return w.Body(r, classify), nil
}

// Put writes an object, replacing any previous one. GCS makes an upload visible only
// once complete.
func (s *Store) Put(ctx context.Context, p string, data []byte) error {
	if err := deltalog.CheckPath(p); err != nil {
		return fmt.Errorf("gcsstore: put: %w", err)
	}
	if err := s.write(ctx, s.bucket.Object(s.object(p)), data); err != nil {
		return fmt.Errorf("gcsstore: put %q: %w", p, classify(err))
	}
	return nil
}

// PutIfAbsent writes an object unless one exists at p, in which case it returns an error
// matching deltalog.ErrExist.
//
// A 412 is ambiguous when the SDK retried the upload after a timeout or 5xx: the first
// attempt may have succeeded, and then it is our own object that is "already there".
// So on 412 the store reads the object back; if it holds exactly our bytes, the put
// succeeded. Commits carry a unique commitInfo, so equal bytes mean this writer wrote it.
func (s *Store) PutIfAbsent(ctx context.Context, p string, data []byte) error {
	if err := deltalog.CheckPath(p); err != nil {
		return fmt.Errorf("gcsstore: put-if-absent: %w", err)
	}
	obj := s.bucket.Object(s.object(p)).If(storage.Conditions{DoesNotExist: true})
	err := s.write(ctx, obj, data)
	if statusOf(err) != http.StatusPreconditionFailed {
		if err != nil {
			return fmt.Errorf("gcsstore: put-if-absent %q: %w", p, classify(err))
		}
		return nil
	}
	ours, err := deltalog.Holds(ctx, s, p, data)
	if err != nil {
		// Unknown whether the object is ours: neither success nor ErrExist is safe,
		// since a committer would retry at the next version after ErrExist.
		return fmt.Errorf("gcsstore: put-if-absent %q: name taken, reading it back failed: %w", p, err)
	}
	if ours {
		return nil
	}
	return fmt.Errorf("gcsstore: put-if-absent %q: %w", p, deltalog.ErrExist)
}

// maxOneShot is the largest object written in one request; larger ones go up in chunks
// of this size, each retried on its own.
const maxOneShot = 16 << 20

// write uploads data to obj under a watchdog. Its error is the SDK's, for statusOf, or a
// timeout already classified.
func (s *Store) write(ctx context.Context, obj *storage.ObjectHandle, data []byte) error {
	ctx, w := s.watch(ctx, "put", obj.ObjectName())
	defer w.Stop()
	wr := obj.NewWriter(ctx)
	// A chunk larger than the object makes it one request whose buffered body the SDK
	// can retry; a zero ChunkSize would be one request that is never retried.
	const unit = 256 << 10
	wr.ChunkSize = min((len(data)/unit+1)*unit, maxOneShot)
	if _, err := wr.Write(data); err != nil {
		_ = wr.Close()
		return w.TimedOut(err)
	}
	return w.TimedOut(wr.Close())
}

// Delete removes an object; a missing object is not an error.
func (s *Store) Delete(ctx context.Context, p string) error {
	if err := deltalog.CheckPath(p); err != nil {
		return fmt.Errorf("gcsstore: delete: %w", err)
	}
	ctx, w := s.watch(ctx, "delete", s.object(p))
	err := s.bucket.Object(s.object(p)).Delete(ctx)
	w.Stop()
	if err != nil && !errors.Is(err, storage.ErrObjectNotExist) {
		return fmt.Errorf("gcsstore: delete %q: %w", p, classify(w.TimedOut(err)))
	}
	return nil
}

// List yields the objects under prefix that sort after startAfter, in name order. GCS
// lists in lexicographic order of the UTF-8 name bytes, as deltalog.Store requires.
func (s *Store) List(ctx context.Context, prefix, startAfter string) iter.Seq2[deltalog.ObjectInfo, error] {
	return func(yield func(deltalog.ObjectInfo, error) bool) {
		q := &storage.Query{Prefix: s.object(prefix)}
		if startAfter != "" {
			q.StartOffset = s.object(startAfter) // inclusive: the object itself is skipped below
		}
		if err := q.SetAttrSelection([]string{"Name", "Size", "Updated"}); err != nil {
			yield(deltalog.ObjectInfo{}, fmt.Errorf("gcsstore: listing %q: %w", prefix, err))
			return
		}
		// One watchdog over the listing, paused while the consumer has an item: only
		// the page requests count against the timeout.
		ctx, w := s.watch(ctx, "list", s.object(prefix))
		defer w.Stop()
		it := s.bucket.Objects(ctx, q)
		for {
			w.Kick()
			o, err := it.Next()
			if errors.Is(err, iterator.Done) {
				return
			}
			if err != nil {
				yield(deltalog.ObjectInfo{}, fmt.Errorf("gcsstore: listing %q: %w", prefix, classify(w.TimedOut(err))))
				return
			}
			p, ok := strings.CutPrefix(o.Name, s.root)
			if !ok || (startAfter != "" && p <= startAfter) {
				continue
			}
			w.Pause()
			if !yield(deltalog.ObjectInfo{Path: p, Size: o.Size, ModTime: o.Updated}, nil) {
				return
			}
		}
	}
}
