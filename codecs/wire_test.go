package codecs

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSplitHeader(t *testing.T) {
	tests := []struct {
		name     string
		in       []byte
		wantID   int
		wantBody []byte
		wantErr  error
	}{
		{name: "id 1 empty body", in: []byte{0, 0, 0, 0, 1}, wantID: 1, wantBody: []byte{}},
		{name: "id 258 body", in: []byte{0, 0, 0, 1, 2, 0xaa}, wantID: 258, wantBody: []byte{0xaa}},
		{name: "max id", in: []byte{0, 0x7f, 0xff, 0xff, 0xff}, wantID: 1<<31 - 1, wantBody: []byte{}},
		{name: "sign bit", in: []byte{0, 0x80, 0, 0, 0}, wantErr: ErrBadHeader},
		{name: "magic 1 (header GUID framing)", in: []byte{1, 0, 0, 0, 1}, wantErr: ErrBadHeader},
		{name: "json payload", in: []byte(`{"a":1}`), wantErr: ErrBadHeader},
		{name: "four bytes", in: []byte{0, 0, 0, 1}, wantErr: ErrBadHeader},
		{name: "empty", in: nil, wantErr: ErrBadHeader},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id, body, err := SplitHeader(tc.in)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				require.Equal(t, -1, id)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.wantID, id)
			require.Equal(t, tc.wantBody, body)
			require.Equal(t, tc.in[:5], AppendHeader(nil, id))
		})
	}
}
