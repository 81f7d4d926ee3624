package deltalog

import (
	"context"
	"errors"
	"io"
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
			name:    "spark classic",
			content: ckptPtr(`{"version":10,"size":13,"sizeInBytes":21857,"numOfAddFiles":10,"checkpointSchema":{"type":"struct","fields":[]},"checksum":"6a92d155a59bf2eecbd4b4ec7fd1f875"}`),
			want:    &LastCheckpoint{Version: 10, Size: 13, SizeInBytes: ckptPtr(int64(21857)), NumOfAddFiles: ckptPtr(int64(10)), Checksum: "6a92d155a59bf2eecbd4b4ec7fd1f875"},
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
	require.JSONEq(t, `{"version":30,"size":41,"sizeInBytes":1234,"numOfAddFiles":37}`, string(s.files[lastCheckpointPath]))
	got, err := readLastCheckpoint(t.Context(), s)
	require.NoError(t, err)
	require.Equal(t, &lc, got)
}
