package datafile

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDecimalBytes(t *testing.T) {
	tests := []struct{ precision, want int }{{2, 1}, {10, 5}, {19, 9}, {38, 16}}
	for _, tc := range tests {
		require.Equal(t, tc.want, decimalBytes(tc.precision), "precision %d", tc.precision)
	}
}
