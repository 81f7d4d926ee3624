package processor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/processor/merge"
)

// TestZeroFieldsTakeWhatUsersRun: a field left zero that has no zero
// meaning runs the value the configuration's users run (config.Default is
// built from DefaultBatchLimits and DefaultMaintenance); a zero that means
// off means off here as in the configuration.
func TestZeroFieldsTakeWhatUsersRun(t *testing.T) {
	d := BatchLimits{}.withDefaults()
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"bytes", d.Bytes, int64(16 << 20)},
		{"min records", d.MinRecords, 100},
		{"max delay", d.MaxDelay, 10 * time.Second},
		{"default commits per second", DefaultBatchLimits().CommitsPerSecond, 50.0},
		{"default drained", DefaultBatchLimits().Drained, true},
		{"zero commits per second: unlimited", d.CommitsPerSecond, 0.0},
		{"zero drained: off", d.Drained, false},
		{"min records follows records", BatchLimits{Records: 50}.withDefaults().MinRecords, 50},
		{"max delay follows age", BatchLimits{Age: 30 * time.Second}.withDefaults().MaxDelay, 30 * time.Second},
		{"records follow min records", BatchLimits{MinRecords: 50_000}.withDefaults().Records, 50_000},
		{"age follows max delay", BatchLimits{MaxDelay: 500 * time.Millisecond}.withDefaults().Age, 500 * time.Millisecond},
		{"batch bytes follow buffer", Options{MaxBufferedBytes: 1 << 20}.withDefaults().Batch.Bytes, int64(1 << 20)},
		{"checkpoint commits follow max", Maintenance{CheckpointMaxCommits: 4}.withDefaults().CheckpointCommits, 4},
		{"checkpoint max follows commits", Maintenance{CheckpointCommits: 500}.withDefaults().CheckpointMaxCommits, 500},
		{"buffer follows batch bytes", Options{Batch: BatchLimits{Bytes: 1 << 30}}.withDefaults().MaxBufferedBytes, int64(1 << 30)},
		{"zero tail file size: off", Maintenance{}.withDefaults().TailFileSize, int64(0)},
		{"default tail file size", DefaultMaintenance().TailFileSize, int64(merge.DefaultTailFileSize)},
		{"max compact rows", Maintenance{}.withDefaults().MaxCompactRows, int64(1 << 22)},
	} {
		require.Equal(t, tc.want, tc.got, tc.name)
	}
	require.Equal(t, DefaultBatchLimits(), Options{Batch: DefaultBatchLimits()}.withDefaults().Batch, "the defaults are a fixed point")
	m := DefaultMaintenance().withDefaults()
	m.Every = 0 // not configurable, so not among the defaults
	require.Equal(t, DefaultMaintenance(), m, "the defaults are a fixed point")
}
