package processor

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadySummaryCounts: /readyz's first line counts in the singular for one.
func TestReadySummaryCounts(t *testing.T) {
	tests := []struct {
		partitions, tables int
		want               string
	}{
		{1, 1, "ready: 1 partition, 1 table"},
		{0, 0, "ready: 0 partitions, 0 tables"},
		{6, 3, "ready: 6 partitions, 3 tables"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, readySummary(tt.partitions, tt.tables))
	}
}
