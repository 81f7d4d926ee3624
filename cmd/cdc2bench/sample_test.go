package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		want    procStat
		wantErr bool
	}{
		{
			name: "plain",
			line: "1234 (sleep) S 99 1234 1234 0 -1 4194304 80 0 0 0 7 3 2 1 20 0 1 0 100 2000000 256 18446744073709551615",
			want: procStat{pid: 1234, ppid: 99, ticks: 13, rssPages: 256},
		},
		{
			name: "name with spaces and parentheses",
			line: "77 (my (odd) name) R 1 77 77 0 -1 0 0 0 0 0 100 50 0 0 20 0 4 0 5 9000 1000 0",
			want: procStat{pid: 77, ppid: 1, ticks: 150, rssPages: 1000},
		},
		{name: "short", line: "5 (x) S 1 2 3", wantErr: true},
		{name: "no name", line: "5 S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22", wantErr: true},
		{name: "bad number", line: "5 (x) S 1 5 5 0 -1 0 0 0 0 0 x 1 0 0 20 0 1 0 1 1 1 0", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseProcStat([]byte(tt.line))
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func FuzzParseProcStat(f *testing.F) {
	f.Add([]byte("1234 (sleep) S 99 1234 1234 0 -1 4194304 80 0 0 0 7 3 2 1 20 0 1 0 100 2000000 256 0"))
	f.Add([]byte("1 ()) R"))
	f.Fuzz(func(t *testing.T, line []byte) {
		if _, err := parseProcStat(line); err != nil {
			return
		}
		// Accepted lines have a name and at least up to the rss field.
		end := bytes.LastIndexByte(line, ')')
		require.Positive(t, end)
		require.GreaterOrEqual(t, len(bytes.Fields(line[end+1:])), 22)
	})
}

func TestTreeUsage(t *testing.T) {
	procs := map[int]procStat{
		1:  {pid: 1, ppid: 0, ticks: 1000, rssPages: 1000},
		10: {pid: 10, ppid: 1, ticks: 5, rssPages: 10},
		11: {pid: 11, ppid: 10, ticks: 7, rssPages: 20},
		12: {pid: 12, ppid: 11, ticks: 1, rssPages: 40},
		20: {pid: 20, ppid: 1, ticks: 100, rssPages: 100},
	}
	rss, ticks := treeUsage(procs, 10)
	require.Equal(t, int64(70), rss)
	require.Equal(t, int64(13), ticks)
	rss, ticks = treeUsage(procs, 99)
	require.Zero(t, rss)
	require.Zero(t, ticks)
}

func TestRunSampledMemoryOfTree(t *testing.T) {
	u, err := runSampled(t.Context(), helper("tree"), 50*time.Millisecond)
	require.NoError(t, err)
	// 32 MiB in the parent and 64 MiB in its child are resident together:
	// only the tree sum reaches 96 MiB.
	require.GreaterOrEqual(t, u.PeakRSS, int64(96<<20))
	require.Less(t, u.PeakRSS, int64(1<<30))
	require.GreaterOrEqual(t, u.WallSeconds, 1.0)
	require.Greater(t, u.Samples, 5)
	// Touching 96 MiB takes measurable CPU.
	require.Greater(t, u.CPUSeconds, 0.0)
}

func TestRunSampledCPU(t *testing.T) {
	// A shell loop that burns CPU for a while, in a grandchild.
	cmd := exec.Command("sh", "-c", `sh -c 'i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done'`)
	u, err := runSampled(t.Context(), cmd, 50*time.Millisecond)
	require.NoError(t, err)
	require.Greater(t, u.CPUSeconds, 0.05)
	require.LessOrEqual(t, u.CPUSeconds, 2*u.WallSeconds+0.1, "CPU beyond 2 cores")
}

func TestRunSampledKillsOnCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := runSampled(ctx, exec.Command("sh", "-c", "sleep 60 & sleep 60"), 50*time.Millisecond)
	require.Error(t, err)
	require.Less(t, time.Since(start), 20*time.Second)
}

func TestRunSampledFailure(t *testing.T) {
	_, err := runSampled(t.Context(), exec.Command("sh", "-c", "exit 3"), 50*time.Millisecond)
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, 3, ee.ExitCode())
}

// TestRunSampledIgnoresParentMemory checks that a small child of a big
// parent is not charged the parent's memory.
func TestRunSampledIgnoresParentMemory(t *testing.T) {
	big := make([]byte, 256<<20)
	for i := range big {
		big[i] = byte(i)
	}
	u, err := runSampled(t.Context(), exec.Command("sleep", "0.3"), 50*time.Millisecond)
	require.NoError(t, err)
	require.Less(t, u.PeakRSS, int64(64<<20), "sleep charged %d MiB", u.PeakRSS>>20)
	require.Equal(t, byte(255), big[255])
}

func TestHighWaterRSS(t *testing.T) {
	hwm := highWaterRSS(os.Getpid())
	require.Positive(t, hwm)
	require.Zero(t, highWaterRSS(-1))
}
