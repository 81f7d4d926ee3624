package urlcred

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRedact(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://user:secret@host:8081", "http://user:***@host:8081"},
		{"https://user:secret@host/path?q=1", "https://user:***@host/path?q=1"},
		{"http://user:p%40ss@host", "http://user:***@host"},
		{"http://user:p@ss@host/x", "http://user:***@host/x"},
		{"http://user@host", "http://user@host"},
		{"http://host:8081/a@b", "http://host:8081/a@b"},
		{"http://host:8081", "http://host:8081"},
		{"user:secret@host:8081", "user:***@host:8081"},
		{"ht!tp://user:sec ret@host", "ht!tp://user:***@host"},
		{"s3://AKIA:secret@bucket/prefix", "s3://AKIA:***@bucket/prefix"},
		{"", ""},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			require.Equal(t, tc.want, Redact(tc.in))
			require.Equal(t, tc.want != tc.in || tc.in == "http://user@host", HasUserinfo(tc.in))
		})
	}
}

func TestSplit(t *testing.T) {
	tests := []struct {
		name, in              string
		clean, user, password string
		wantErr               error
	}{
		{"credentials", "http://user:secret@host:8081/ctx", "http://host:8081/ctx", "user", "secret", nil},
		{"escaped", "https://u%3Ax:p%40ss@host", "https://host", "u:x", "p@ss", nil},
		{"user only", "http://token@host", "http://host", "token", "", nil},
		{"none", "http://host:8081", "http://host:8081", "", "", nil},
		{"unparsable", "http://user:secret@host:port", "", "", "", ErrUnparsable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clean, user, password, err := Split(tc.in)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				require.NotContains(t, err.Error(), "secret")
				require.Contains(t, err.Error(), "user:***@host")
				return
			}
			require.NoError(t, err)
			require.Equal(t, []string{tc.clean, tc.user, tc.password}, []string{clean, user, password})
		})
	}
}
