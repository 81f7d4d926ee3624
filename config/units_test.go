package config_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/config"
)

func TestParseByteSize(t *testing.T) {
	tests := []struct {
		in   string
		want config.ByteSize
		bad  bool
	}{
		{in: "1024", want: 1024},
		{in: "16MiB", want: 16 << 20},
		{in: "512 KiB", want: 512 << 10},
		{in: "2GB", want: 2e9},
		{in: "7B", want: 7},
		{in: "1.5MiB", bad: true},
		{in: "-1", bad: true},
		{in: "MiB", bad: true},
		{in: "99999999999GiB", bad: true},
	}
	for _, tt := range tests {
		got, err := config.ParseByteSize(tt.in)
		if tt.bad {
			require.Error(t, err, tt.in)
			continue
		}
		require.NoError(t, err, tt.in)
		require.Equal(t, tt.want, got, tt.in)
	}
	require.Equal(t, "16MiB", config.ByteSize(16<<20).String())
	require.Equal(t, "1000", config.ByteSize(1000).String())
}
