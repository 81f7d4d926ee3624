package deltalog

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// ckptTestStore is an in-memory Store for the checkpoint tests. Package deltalog cannot
// import deltalog/memstore (it imports deltalog), hence this small copy.
type ckptTestStore struct {
	mu    sync.Mutex
	files map[string][]byte
}

func newCkptTestStore() *ckptTestStore { return &ckptTestStore{files: map[string][]byte{}} }

// loadCkptTestStore copies a directory tree (a table's testdata) into a new store.
func loadCkptTestStore(t testing.TB, dir string) *ckptTestStore {
	t.Helper()
	s := newCkptTestStore()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		s.files[filepath.ToSlash(rel)] = data
		return nil
	})
	require.NoError(t, err)
	return s
}

func (s *ckptTestStore) Get(_ context.Context, path string) (io.ReadCloser, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	data, ok := s.files[path]
	if !ok {
		return nil, &fs.PathError{Op: "get", Path: path, Err: ErrNotExist}
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}

func (s *ckptTestStore) Put(_ context.Context, path string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[path] = bytes.Clone(data)
	return nil
}

func (s *ckptTestStore) PutIfAbsent(_ context.Context, path string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.files[path]; ok {
		return ErrExist
	}
	s.files[path] = bytes.Clone(data)
	return nil
}

func (s *ckptTestStore) List(_ context.Context, prefix, startAfter string) iter.Seq2[ObjectInfo, error] {
	s.mu.Lock()
	var infos []ObjectInfo
	for p, d := range s.files {
		if strings.HasPrefix(p, prefix) && p > startAfter {
			infos = append(infos, ObjectInfo{Path: p, Size: int64(len(d)), ModTime: time.Unix(0, 0)})
		}
	}
	s.mu.Unlock()
	sort.Slice(infos, func(i, j int) bool { return infos[i].Path < infos[j].Path })
	return func(yield func(ObjectInfo, error) bool) {
		for _, o := range infos {
			if !yield(o, nil) {
				return
			}
		}
	}
}

func (s *ckptTestStore) Delete(_ context.Context, path string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.files, path)
	return nil
}
