package deltalog

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReadLastCheckpoint(t *testing.T) {
	tests := []struct {
		name    string
		content *string // nil: no file
		want    *LastCheckpoint
		wantErr string
	}{
		{name: "absent", content: nil, want: nil},
		{
			name:    "classic with checkpointSchema",
			content: ckptPtr(`{"version":10,"size":13,"sizeInBytes":21857,"numOfAddFiles":10,"checkpointSchema":{"type":"struct","fields":[]}}`),
			want:    &LastCheckpoint{Version: 10, Size: 13, SizeInBytes: ckptPtr(int64(21857)), NumOfAddFiles: ckptPtr(int64(10))},
		},
		{
			name:    "valid checksum",
			content: ckptPtr(`{"version":10,"size":13,"checksum":"` + ckptMustChecksum(`{"version":10,"size":13}`) + `"}`),
			want:    &LastCheckpoint{Version: 10, Size: 13, Checksum: ckptMustChecksum(`{"version":10,"size":13}`)},
		},
		{
			name:    "checksum mismatch",
			content: ckptPtr(`{"version":11,"size":13,"checksum":"` + ckptMustChecksum(`{"version":10,"size":13}`) + `"}`),
			wantErr: "checksum mismatch",
		},
		{
			name:    "multi-part",
			content: ckptPtr(`{"version":4,"size":7,"parts":2}`),
			want:    &LastCheckpoint{Version: 4, Size: 7, Parts: ckptPtr(2)},
		},
		{
			name:    "v2",
			content: ckptPtr(`{"version":2,"size":5,"v2Checkpoint":{"path":"00000000000000000002.checkpoint.80a083e8-7026-4e79-81be-64bd76c43a11.json","sizeInBytes":1,"modificationTime":2,"nonFileActions":[],"sidecarFiles":[]}}`),
			want: &LastCheckpoint{Version: 2, Size: 5, V2Checkpoint: &V2CheckpointInfo{
				Path: "00000000000000000002.checkpoint.80a083e8-7026-4e79-81be-64bd76c43a11.json", SizeInBytes: 1, ModificationTime: 2,
			}},
		},
		{name: "size absent reads as zero", content: ckptPtr(`{"version":3}`), want: &LastCheckpoint{Version: 3}},
		{name: "empty", content: ckptPtr(""), wantErr: "unexpected end of JSON input"},
		{name: "truncated", content: ckptPtr(`{"version":3,"si`), wantErr: "unexpected end"},
		{name: "no version", content: ckptPtr(`{"size":3}`), wantErr: "no version"},
		{name: "negative version", content: ckptPtr(`{"version":-1,"size":3}`), wantErr: "negative version"},
		{name: "negative size", content: ckptPtr(`{"version":1,"size":-3}`), wantErr: "negative size"},
		{name: "zero parts", content: ckptPtr(`{"version":1,"size":3,"parts":0}`), wantErr: "0 parts"},
		{name: "wrong type", content: ckptPtr(`{"version":"1","size":3}`), wantErr: "cannot unmarshal"},
		{name: "not an object", content: ckptPtr(`[1]`), wantErr: "cannot unmarshal"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newCkptTestStore()
			if tc.content != nil {
				s.files[lastCheckpointPath] = []byte(*tc.content)
			}
			got, err := readLastCheckpoint(t.Context(), s)
			if tc.wantErr != "" {
				var cfe *CorruptFileError
				require.ErrorAs(t, err, &cfe)
				require.Equal(t, lastCheckpointPath, cfe.Path)
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// brokenGetStore fails reads with an I/O error other than "not found".
type brokenGetStore struct{ *ckptTestStore }

var errCkptGet = errors.New("connection reset")

func (brokenGetStore) Get(context.Context, string) (io.ReadCloser, error) { return nil, errCkptGet }

func TestReadLastCheckpointStoreError(t *testing.T) {
	_, err := readLastCheckpoint(t.Context(), brokenGetStore{newCkptTestStore()})
	require.ErrorIs(t, err, errCkptGet)
	var cfe *CorruptFileError
	require.False(t, errors.As(err, &cfe), "an I/O failure says nothing about the file's content")
}

func TestWriteLastCheckpointRoundTrip(t *testing.T) {
	s := newCkptTestStore()
	lc := LastCheckpoint{Version: 30, Size: 41, SizeInBytes: ckptPtr(int64(1234)), NumOfAddFiles: ckptPtr(int64(37))}
	require.NoError(t, writeLastCheckpoint(t.Context(), s, lc))
	sum := ckptMustChecksum(`{"version":30,"size":41,"sizeInBytes":1234,"numOfAddFiles":37}`)
	require.JSONEq(t, `{"version":30,"size":41,"sizeInBytes":1234,"numOfAddFiles":37,"checksum":"`+sum+`"}`, string(s.files[lastCheckpointPath]))
	got, err := readLastCheckpoint(t.Context(), s)
	require.NoError(t, err)
	lc.Checksum = sum
	require.Equal(t, &lc, got)
}

// TestLastCheckpointChecksum checks the canonical-form MD5 against the protocol's test
// vector and against _last_checkpoint files Spark wrote (with nested schemas, arrays,
// empty objects and escaped strings).
func TestLastCheckpointChecksum(t *testing.T) {
	spec := `{"k0":"'v 0'", "checksum": "x", "k1":{"k2": 2, "k3": ["v3", [1, 2], {"k4": "v4", "k5": ["v5", "v6", "v7"]}]}}`
	require.Equal(t, "6a92d155a59bf2eecbd4b4ec7fd1f875", ckptMustChecksum(spec))

	files, err := filepath.Glob(filepath.Join("testdata", "checkpoints", "spark-*", "_delta_log", "_last_checkpoint"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		var withSum struct{ Checksum string }
		require.NoError(t, json.Unmarshal(data, &withSum))
		require.NotEmpty(t, withSum.Checksum, f)
		require.Equal(t, withSum.Checksum, ckptMustChecksum(string(data)), f)
		_, err = parseLastCheckpoint(data)
		require.NoError(t, err, f)
	}
	_, err = lastCheckpointChecksum([]byte("{"))
	require.Error(t, err)
}

func ckptMustChecksum(s string) string {
	sum, err := lastCheckpointChecksum([]byte(s))
	if err != nil {
		panic(err)
	}
	return sum
}
