// Package storetest is a conformance suite for deltalog.Store implementations. Every
// store (localstore, s3store, memstore) runs it, so commit and replay code can rely on
// the same semantics everywhere. It also holds what the object stores' tests share:
// an endpoint that never answers, and the check that every operation on it times out.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// NewStore returns a new, empty store for one subtest.
type NewStore func(t *testing.T) deltalog.Store

// Run runs the conformance suite as subtests of t, each on a fresh store.
func Run(t *testing.T, newStore NewStore) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s deltalog.Store)
	}{
		{"GetMissing", testGetMissing},
		{"PutGet", testPutGet},
		{"PutReplaces", testPutReplaces},
		{"PutIfAbsent", testPutIfAbsent},
		{"PutIfAbsentRace", testPutIfAbsentRace},
		{"InvalidPaths", testInvalidPaths},
		{"Delete", testDelete},
		{"ListOrder", testListOrder},
		{"ListPrefixStartAfter", testListPrefixStartAfter},
		{"ListStopEarly", testListStopEarly},
		{"CanceledContext", testCanceledContext},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, newStore(t))
		})
	}
}

// Read returns the whole content of an object.
func Read(ctx context.Context, s deltalog.Store, p string) ([]byte, error) {
	rc, err := s.Get(ctx, p)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// Paths collects the paths List yields.
func Paths(ctx context.Context, s deltalog.Store, prefix, startAfter string) ([]string, error) {
	var out []string
	for info, err := range s.List(ctx, prefix, startAfter) {
		if err != nil {
			return out, err
		}
		out = append(out, info.Path)
	}
	return out, nil
}

func testGetMissing(t *testing.T, s deltalog.Store) {
	_, err := s.Get(t.Context(), "_delta_log/00000000000000000000.json")
	require.ErrorIs(t, err, deltalog.ErrNotExist)
	require.ErrorContains(t, err, "00000000000000000000.json", "the error names the path")
}

func testPutGet(t *testing.T, s deltalog.Store) {
	ctx := t.Context()
	objects := map[string][]byte{
		"_delta_log/00000000000000000000.json": []byte(`{"commitInfo":{}}` + "\n"),
		"part=a b/c=%25/part-0.parquet":        []byte("PAR1\x00\x01PAR1"),
		"empty":                                {},
		"deep/er/and/deeper/x.bin":             make([]byte, 1<<16+3),
	}
	for p, data := range objects {
		require.NoError(t, s.Put(ctx, p, data), p)
	}
	for p, data := range objects {
		got, err := Read(ctx, s, p)
		require.NoError(t, err, p)
		require.Equal(t, len(data), len(got), p)
		require.Equal(t, data, got, p)
	}
	for info, err := range s.List(ctx, "", "") {
		require.NoError(t, err)
		require.Equal(t, int64(len(objects[info.Path])), info.Size, info.Path)
		require.False(t, info.ModTime.IsZero(), info.Path)
	}
}

func testPutReplaces(t *testing.T, s deltalog.Store) {
	ctx := t.Context()
	const p = "_delta_log/_last_checkpoint"
	require.NoError(t, s.Put(ctx, p, []byte(`{"version":10,"size":100}`)))
	require.NoError(t, s.Put(ctx, p, []byte(`{"version":20}`)))
	got, err := Read(ctx, s, p)
	require.NoError(t, err)
	require.Equal(t, `{"version":20}`, string(got))
	paths, err := Paths(ctx, s, "", "")
	require.NoError(t, err)
	require.Equal(t, []string{p}, paths, "no temporary files left behind")
}

func testPutIfAbsent(t *testing.T, s deltalog.Store) {
	ctx := t.Context()
	const p = "_delta_log/00000000000000000001.json"
	require.NoError(t, s.PutIfAbsent(ctx, p, []byte("first")))
	err := s.PutIfAbsent(ctx, p, []byte("second"))
	require.ErrorIs(t, err, deltalog.ErrExist)
	got, err := Read(ctx, s, p)
	require.NoError(t, err)
	require.Equal(t, "first", string(got), "a lost put-if-absent must not change the object")

	require.NoError(t, s.Put(ctx, "x/y", []byte("put")))
	require.ErrorIs(t, s.PutIfAbsent(ctx, "x/y", []byte("pia")), deltalog.ErrExist)

	require.NoError(t, s.Delete(ctx, p))
	require.NoError(t, s.PutIfAbsent(ctx, p, []byte("after delete")))

	paths, err := Paths(ctx, s, "", "")
	require.NoError(t, err)
	require.Equal(t, []string{p, "x/y"}, paths, "no temporary files left behind")
}

// testPutIfAbsentRace has writers race for each of several versions, as committers do:
// every version must be won by exactly one writer and hold the winner's bytes.
func testPutIfAbsentRace(t *testing.T, s deltalog.Store) {
	ctx := t.Context()
	const writers, versions = 6, 5
	var wins [versions]atomic.Int32
	var winner [versions]atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, writers*versions)
	start := make(chan struct{})
	for w := range writers {
		wg.Go(func() {
			<-start
			for v := range versions {
				p := fmt.Sprintf("_delta_log/%020d.json", v)
				err := s.PutIfAbsent(ctx, p, fmt.Appendf(nil, "writer %d", w))
				switch {
				case err == nil:
					wins[v].Add(1)
					winner[v].Store(int32(w))
				case !errors.Is(err, deltalog.ErrExist):
					errs <- err
				}
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for v := range versions {
		require.EqualValues(t, 1, wins[v].Load(), "version %d", v)
		got, err := Read(ctx, s, fmt.Sprintf("_delta_log/%020d.json", v))
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("writer %d", winner[v].Load()), string(got))
	}
}

func testInvalidPaths(t *testing.T, s deltalog.Store) {
	ctx := t.Context()
	for _, p := range []string{"", "/etc/passwd", "../outside", "a/../../b", "a//b", "./a", "a/", "a/./b"} {
		_, err := s.Get(ctx, p)
		require.ErrorIs(t, err, deltalog.ErrInvalidPath, "get %q", p)
		require.ErrorIs(t, s.Put(ctx, p, []byte("x")), deltalog.ErrInvalidPath, "put %q", p)
		require.ErrorIs(t, s.PutIfAbsent(ctx, p, []byte("x")), deltalog.ErrInvalidPath, "put-if-absent %q", p)
		require.ErrorIs(t, s.Delete(ctx, p), deltalog.ErrInvalidPath, "delete %q", p)
	}
	paths, err := Paths(ctx, s, "", "")
	require.NoError(t, err)
	require.Empty(t, paths)
}

func testDelete(t *testing.T, s deltalog.Store) {
	ctx := t.Context()
	require.NoError(t, s.Delete(ctx, "never/existed.parquet"), "deleting a missing object is not an error")
	require.NoError(t, s.Put(ctx, "a/b.parquet", []byte("1")))
	require.NoError(t, s.Put(ctx, "a/c.parquet", []byte("2")))
	require.NoError(t, s.Delete(ctx, "a/b.parquet"))
	_, err := s.Get(ctx, "a/b.parquet")
	require.ErrorIs(t, err, deltalog.ErrNotExist)
	require.NoError(t, s.Delete(ctx, "a/b.parquet"))
	paths, err := Paths(ctx, s, "", "")
	require.NoError(t, err)
	require.Equal(t, []string{"a/c.parquet"}, paths)
}

// treePaths are stored by the listing tests. Their order mixes names that sort around
// '/' (0x2f): '-' and '.' sort before it, '0' and '_' after, so a store that walks
// directories naively gets it wrong. No path is also a directory ("a/b" beside "a/b/c"):
// S3 allows that, file systems do not, and Delta tables never need it.
var treePaths = []string{
	"_delta_log/00000000000000000000.json",
	"_delta_log/00000000000000000001.checkpoint.parquet",
	"_delta_log/00000000000000000001.json",
	"_delta_log/00000000000000000002.json",
	"_delta_log/_last_checkpoint",
	"a-b",
	"a.txt",
	"a/b.c",
	"a/b/c",
	"a0",
	"ab/x",
	"p=1/part-0.parquet",
	"p=1/q=x/part-1.parquet",
	"p=10/part-2.parquet",
}

func putTree(t *testing.T, s deltalog.Store) {
	// Put in reverse so that insertion order cannot masquerade as sorted order.
	for i := len(treePaths) - 1; i >= 0; i-- {
		require.NoError(t, s.Put(t.Context(), treePaths[i], []byte(treePaths[i])))
	}
}

func testListOrder(t *testing.T, s deltalog.Store) {
	putTree(t, s)
	paths, err := Paths(t.Context(), s, "", "")
	require.NoError(t, err)
	require.Equal(t, treePaths, paths)
}

func testListPrefixStartAfter(t *testing.T, s deltalog.Store) {
	putTree(t, s)
	tests := []struct {
		name, prefix, startAfter string
		want                     []string
	}{
		{"log dir", "_delta_log/", "", treePaths[:5]},
		{"log after version", "_delta_log/", "_delta_log/00000000000000000001.checkpoint.parquet", treePaths[2:5]},
		{"start after missing key", "_delta_log/", "_delta_log/00000000000000000001.k", treePaths[3:5]},
		{"partial name prefix", "_delta_log/0000000000000000000", "", treePaths[:4]},
		{"start after before prefix", "p=1", "a", treePaths[11:]},
		{"start after past prefix", "_delta_log/", "b", nil},
		{"dir prefix", "a/", "", []string{"a/b.c", "a/b/c"}},
		{"name prefix spans dirs", "a", "", treePaths[5:11]},
		{"start after a dir name", "", "a/b", treePaths[7:]},
		{"start after a dir key", "a", "a/b/", treePaths[8:11]},
		{"start after inside subtree", "p=1/", "p=1/q", []string{"p=1/q=x/part-1.parquet"}},
		{"missing prefix", "nope/", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			paths, err := Paths(t.Context(), s, tc.prefix, tc.startAfter)
			require.NoError(t, err)
			require.Equal(t, tc.want, paths)
		})
	}
}

func testListStopEarly(t *testing.T, s deltalog.Store) {
	putTree(t, s)
	var got []string
	for info, err := range s.List(t.Context(), "", "") {
		require.NoError(t, err)
		got = append(got, info.Path)
		if len(got) == 3 {
			break
		}
	}
	require.Equal(t, treePaths[:3], got)
}

func testCanceledContext(t *testing.T, s deltalog.Store) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	require.ErrorIs(t, s.Put(ctx, "a", []byte("x")), context.Canceled)
	require.ErrorIs(t, s.PutIfAbsent(ctx, "b", []byte("x")), context.Canceled)
	_, err := s.Get(ctx, "a")
	require.ErrorIs(t, err, context.Canceled)
	paths, err := Paths(t.Context(), s, "", "")
	require.NoError(t, err)
	require.Empty(t, paths, "a canceled put must not write")
}
