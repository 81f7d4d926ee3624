package deltalog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/url"
	"strings"
	"sync"
)

// ErrForeignPath reports a write or delete of a file named by absolute URI through a
// table's store: such files belong to another table (the source of a shallow clone), and
// a table never changes another's files.
var ErrForeignPath = errors.New("deltalog: a file named by absolute URI belongs to another table")

// Opener opens the store rooted at root: a local directory ("/" for the file system
// root) or a bucket or container URL without a path ("s3://bucket", "gs://bucket",
// "abfss://container@account.dfs.core.windows.net"). The table commands open tables
// the same way, with the same credentials.
type Opener func(ctx context.Context, root string) (Store, error)

// ResolveAbsolutePaths lets the table read data files and deletion vectors named by
// absolute URI, as a SHALLOW CLONE names its source's files: a file is read from the
// store open returns for the URI's scheme and authority (one per bucket, opened on first
// use). The snapshot lists such files in [Snapshot.AbsolutePaths], and Commit still
// refuses a snapshot that has them: the table is read, not written.
func ResolveAbsolutePaths(open Opener) Option {
	return func(o *tableOptions) {
		o.keepAbsolutePaths = true
		o.resolve = open
	}
}

// SplitAbsoluteURI splits an absolute add.path or deletion vector path into the root of
// the store that holds it (see [Opener]) and its object path there, percent-decoded as
// PROTOCOL.md requires (the path is an RFC 2396 URI). "file:/t/a%20b.parquet",
// "file:///t/a%20b.parquet" and "/t/a%20b.parquet" give ("/", "t/a b.parquet");
// "s3://bucket/t/x.parquet" gives ("s3://bucket", "t/x.parquet").
func SplitAbsoluteURI(p string) (root, key string, err error) {
	if !IsAbsolutePath(p) {
		return "", "", fmt.Errorf("%w: %q is not absolute", ErrInvalidPath, p)
	}
	u, err := url.Parse(p)
	if err != nil {
		return "", "", fmt.Errorf("%w: %q: %w", ErrInvalidPath, p, err)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", "", fmt.Errorf("%w: %q: not a file URI", ErrInvalidPath, p)
	}
	key = strings.TrimPrefix(u.Path, "/")
	switch strings.ToLower(u.Scheme) {
	case "", "file": // "" is an absolute path reference, a local file
		if u.Host != "" && u.Host != "localhost" {
			return "", "", fmt.Errorf("%w: %q: a file URI on host %q", ErrInvalidPath, p, u.Host)
		}
		return "/", key, checkKey(p, key)
	default:
		if u.Host == "" {
			return "", "", fmt.Errorf("%w: %q: no bucket or container", ErrInvalidPath, p)
		}
		if u.User != nil && u.User.Username() != "" {
			// abfss://container@account...: the container, not credentials.
			if _, hasPass := u.User.Password(); hasPass {
				return "", "", fmt.Errorf("%w: %q: a file URI carries no credentials", ErrInvalidPath, p)
			}
			return u.Scheme + "://" + u.User.Username() + "@" + u.Host, key, checkKey(p, key)
		}
		return u.Scheme + "://" + u.Host, key, checkKey(p, key)
	}
}

func checkKey(p, key string) error {
	if err := CheckPath(key); err != nil {
		return fmt.Errorf("%w: in %q", err, p)
	}
	return nil
}

// ResolvesAbsolutePaths reports whether s, a table's Store, reads files named by
// absolute URI (the table was opened with [ResolveAbsolutePaths]).
func ResolvesAbsolutePaths(s Store) bool {
	_, ok := s.(*resolvingStore)
	return ok
}

// resolvingStore is a table's store that routes reads of absolute URIs to the store of
// their bucket. Everything else goes to the table's own store.
type resolvingStore struct {
	Store
	open Opener

	mu     sync.Mutex
	stores map[string]Store
}

func (s *resolvingStore) Get(ctx context.Context, p string) (io.ReadCloser, error) {
	if !IsAbsolutePath(p) {
		return s.Store.Get(ctx, p)
	}
	root, key, err := SplitAbsoluteURI(p)
	if err != nil {
		return nil, err
	}
	st, err := s.storeAt(ctx, root)
	if err != nil {
		return nil, err
	}
	rc, err := st.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	return rc, nil
}

func (s *resolvingStore) storeAt(ctx context.Context, root string) (Store, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.stores[root]; ok {
		return st, nil
	}
	st, err := s.open(ctx, root)
	if err != nil {
		return nil, fmt.Errorf("opening the store at %s: %w", root, err)
	}
	s.stores[root] = st
	return st, nil
}

func (s *resolvingStore) Put(ctx context.Context, p string, data []byte) error {
	if IsAbsolutePath(p) {
		return fmt.Errorf("%w: put %q", ErrForeignPath, p)
	}
	return s.Store.Put(ctx, p, data)
}

func (s *resolvingStore) PutIfAbsent(ctx context.Context, p string, data []byte) error {
	if IsAbsolutePath(p) {
		return fmt.Errorf("%w: put %q", ErrForeignPath, p)
	}
	return s.Store.PutIfAbsent(ctx, p, data)
}

func (s *resolvingStore) Delete(ctx context.Context, p string) error {
	if IsAbsolutePath(p) {
		return fmt.Errorf("%w: delete %q", ErrForeignPath, p)
	}
	return s.Store.Delete(ctx, p)
}

func (s *resolvingStore) List(ctx context.Context, prefix, startAfter string) iter.Seq2[ObjectInfo, error] {
	return s.Store.List(ctx, prefix, startAfter)
}

// Root forwards the table store's root, when it has one.
func (s *resolvingStore) Root() string {
	if r, ok := s.Store.(interface{ Root() string }); ok {
		return r.Root()
	}
	return ""
}
