package runopts

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/config"
	"github.com/cdc2delta/cdc2delta/processor"
	"github.com/cdc2delta/cdc2delta/processor/controller"
	"github.com/cdc2delta/cdc2delta/processor/merge"
)

// TestDefaultsAgree: the configuration's defaults, mapped as every binary
// maps them, are the packages' defaults, so the two cannot drift.
func TestDefaultsAgree(t *testing.T) {
	got := Processor(config.Default(), nil)
	// The file's table path is relative to the working directory, under
	// ./tables; the library's is relative to the store OpenStore opens.
	require.Equal(t, "./tables/{database}/{schema}/{table}", got.TablePath)
	got.TablePath = ""
	require.Equal(t, processor.DefaultOptions(), got)
	require.Equal(t, merge.DefaultIndexMemoryKeys, config.Default().Memory.KeyIndexMemoryKeys)
	require.Equal(t, controller.DefaultInterval, time.Duration(config.Default().Control.Interval))
}

// TestSettledDefaults: the five batch defaults the configuration and the
// processor once disagreed on are what a user who sets nothing gets.
func TestSettledDefaults(t *testing.T) {
	b := Batch(config.Default().Batch)
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"max_bytes", b.Bytes, int64(16 << 20)},
		{"min_records", b.MinRecords, 100},
		{"max_delay", b.MaxDelay, 10 * time.Second},
		{"max_commits_per_second", b.CommitsPerSecond, 50.0},
		{"commit_when_drained", b.Drained, true},
	} {
		require.Equal(t, tc.want, tc.got, tc.name)
	}
}

// TestZeroMeansOff: a zero the file gives to a setting where zero means off
// reaches the processor as off, not as its default.
func TestZeroMeansOff(t *testing.T) {
	c := config.Default()
	c.Maintenance.TailFileSize, c.Maintenance.VacuumInterval, c.Batch.MaxCommitsPerSecond, c.Batch.CommitWhenDrained = 0, 0, 0, false
	o := Processor(c, nil)
	require.Zero(t, o.Maintenance.TailFileSize)
	require.Zero(t, o.Maintenance.VacuumInterval)
	require.Zero(t, o.Batch.CommitsPerSecond)
	require.False(t, o.Batch.Drained)
}
