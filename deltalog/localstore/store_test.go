package localstore

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/storetest"
)

func newStore(t *testing.T) *Store {
	s, err := New(Options{Dir: filepath.Join(t.TempDir(), "table")})
	require.NoError(t, err)
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) deltalog.Store { return newStore(t) })
}

// TestConformanceWithoutLinks runs the suite as on a file system that refuses hard
// links, where PutIfAbsent falls back to O_EXCL.
func TestConformanceWithoutLinks(t *testing.T) {
	storetest.Run(t, func(t *testing.T) deltalog.Store {
		s := newStore(t)
		s.link = func(string, string) error { return &os.LinkError{Op: "link", Err: syscall.EPERM} }
		return s
	})
}

func TestNewRequiresDir(t *testing.T) {
	_, err := New(Options{})
	require.Error(t, err)
}

func TestFilesOnDisk(t *testing.T) {
	ctx := t.Context()
	s := newStore(t)
	require.NoError(t, s.PutIfAbsent(ctx, "_delta_log/00000000000000000000.json", []byte("{}\n")))
	require.NoError(t, s.Put(ctx, "p=a/part-0.parquet", []byte("PAR1")))

	for _, p := range []string{"_delta_log/00000000000000000000.json", "p=a/part-0.parquet"} {
		st, err := os.Stat(filepath.Join(s.Root(), filepath.FromSlash(p)))
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o644), st.Mode().Perm(), p)
	}
	des, err := os.ReadDir(filepath.Join(s.Root(), "_delta_log"))
	require.NoError(t, err)
	require.Len(t, des, 1, "the temporary file is gone")
}

func TestGetDirectoryIsNotAnObject(t *testing.T) {
	ctx := t.Context()
	s := newStore(t)
	require.NoError(t, s.Put(ctx, "a/b", []byte("x")))
	_, err := s.Get(ctx, "a")
	require.ErrorIs(t, err, deltalog.ErrNotExist)
	_, err = s.Get(ctx, "a/b/c")
	require.ErrorIs(t, err, deltalog.ErrNotExist, "a file used as a directory")
	require.NoError(t, s.Delete(ctx, "a"))
	_, err = s.Get(ctx, "a/b")
	require.NoError(t, err, "deleting a directory name removes nothing")
}

func TestListSkipsNonRegularAndRejectsEscapes(t *testing.T) {
	ctx := t.Context()
	s := newStore(t)
	require.NoError(t, s.Put(ctx, "_delta_log/00000000000000000000.json", []byte("{}")))
	require.NoError(t, os.Symlink("/etc/hostname", filepath.Join(s.Root(), "_delta_log", "link")))
	paths, err := storetest.Paths(ctx, s, "_delta_log/", "")
	require.NoError(t, err)
	require.Equal(t, []string{"_delta_log/00000000000000000000.json"}, paths)

	_, err = storetest.Paths(ctx, s, "../", "")
	require.ErrorIs(t, err, deltalog.ErrInvalidPath)
}

// TestBefore: a name is dropped from a listing only when both the file of
// that name and a directory of that name sort before startAfter's rest.
func TestBefore(t *testing.T) {
	for _, tc := range []struct {
		name, after string
		want        bool
	}{
		{"00000000000000000009.json", "00000000000000000010.json", true},
		{"00000000000000000010.json", "00000000000000000010.json", false}, // the file is startAfter itself: the loop skips it
		{"00000000000000000011.json", "00000000000000000010.json", false},
		{"a", "a/b", false}, // a directory that holds startAfter
		{"a", "a.b", false}, // "a/" sorts after "a.b"
		{"a", "a0", true},   // "a/" and "a" sort before "a0"
		{"ab", "a", false},  // after it
		{"_sidecars", "_last_checkpoint", false},
	} {
		require.Equal(t, tc.want, before(tc.name, tc.after), "%q after %q", tc.name, tc.after)
	}
}
