package processor

import (
	"bytes"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// logLines returns the lines logged, without their time.
func logLines(buf *bytes.Buffer) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if l != "" {
			out = append(out, regexp.MustCompile(`^time=\S+ `).ReplaceAllString(l, ""))
		}
	}
	buf.Reset()
	return out
}

func TestProgress(t *testing.T) {
	type step struct {
		at              time.Duration // since the test's start
		behind, applied int64
		want            []string // lines logged by this observation
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"idle and caught up: silent", []step{
			{0, 0, 0, nil}, {10 * time.Second, 0, 0, nil}, {time.Hour, 0, 0, nil},
		}},
		{"behind: a line every interval, then caught up once", []step{
			{0, 10000, 0, nil},
			{5 * time.Second, 9000, 1000, nil},
			{10 * time.Second, 8000, 2000, []string{`level=INFO msg="catching up" records_behind=8000 records_per_s=200 eta=40s`}},
			{15 * time.Second, 6000, 4000, nil},
			{20 * time.Second, 5000, 6000, []string{`level=INFO msg="catching up" records_behind=5000 records_per_s=400 eta=13s`}},
			{25 * time.Second, 0, 11000, []string{`level=INFO msg="caught up" records_applied=11000`}},
			{30 * time.Second, 0, 11000, nil},
			{40 * time.Second, 0, 11000, nil},
		}},
		{"caught up when the rest takes less than an interval", []step{
			{0, 10000, 0, nil},
			{10 * time.Second, 5000, 5000, []string{`level=INFO msg="catching up" records_behind=5000 records_per_s=500 eta=10s`}},
			{20 * time.Second, 100, 9900, []string{`level=INFO msg="caught up" records_applied=9900`}},
			{25 * time.Second, 0, 10000, nil},
			{30 * time.Second, 50, 10050, nil},
		}},
		{"keeping up with a live stream: silent", []step{
			{0, 40, 0, nil},
			{10 * time.Second, 35, 1000, nil},
			{20 * time.Second, 0, 2000, nil},
			{30 * time.Second, 60, 3000, nil},
		}},
		{"nothing applied: ETA unknown", []step{
			{0, 500, 0, nil},
			{10 * time.Second, 500, 0, []string{`level=INFO msg="catching up" records_behind=500 records_per_s=0 eta=unknown`}},
			{20 * time.Second, 500, 0, []string{`level=INFO msg="catching up" records_behind=500 records_per_s=0 eta=unknown`}},
		}},
		{"caught up again after falling behind", []step{
			{0, 1000, 0, nil},
			{10 * time.Second, 900, 100, []string{`level=INFO msg="catching up" records_behind=900 records_per_s=10 eta=1m30s`}},
			{15 * time.Second, 0, 1000, []string{`level=INFO msg="caught up" records_applied=1000`}},
			{20 * time.Second, 0, 1000, nil},
			{30 * time.Second, 800, 1000, []string{`level=INFO msg="catching up" records_behind=800 records_per_s=0 eta=unknown`}},
			{35 * time.Second, 0, 1800, []string{`level=INFO msg="caught up" records_applied=1800`}},
			{40 * time.Second, 0, 1800, nil},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			r := progress{log: slog.New(slog.NewTextHandler(&buf, nil)), every: 10 * time.Second}
			t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			for _, s := range tc.steps {
				r.observe(t0.Add(s.at), s.behind, s.applied)
				require.Equal(t, s.want, logLines(&buf), "at %v", s.at)
			}
		})
	}
}

func TestPosition(t *testing.T) {
	p := &Processor{}
	tp := func(n int32) cdctable.TopicPartition { return cdctable.TopicPartition{Topic: "t", Partition: n} }
	p.mu.parts = map[cdctable.TopicPartition]*partition{
		tp(0): {started: true, applied: 99, start: 50, hw: 150}, // 50 behind
		tp(1): {started: true, applied: -1, start: 10, hw: 30},  // none applied yet: 20
		tp(2): {started: true, applied: -1, start: -1, hw: 30},  // start unknown
		tp(3): {started: false, applied: -1, start: 0, hw: 30},  // not started
		tp(4): {started: true, applied: 199, start: 0, hw: 200}, // current
	}
	p.mu.stats.add("a", 7, true)
	behind, applied := p.position()
	require.Equal(t, int64(70), behind)
	require.Equal(t, int64(7), applied)
}

func TestStopSummary(t *testing.T) {
	var buf bytes.Buffer
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := &Processor{log: slog.New(slog.NewTextHandler(&buf, nil)), now: func() time.Time { return t0.Add(90 * time.Minute) }}
	p.mu.stats.add("a", 10, true)
	p.mu.stats.add("a", 5, true)
	p.mu.stats.add("b", 3, true)
	p.mu.stats.add("b", 2, false)
	p.logSummary(t0)
	require.Equal(t, []string{`level=INFO msg=stopped records_applied=20 versions_committed=3 tables=2 uptime=1h30m0s`}, logLines(&buf))
}

// An operator's replay is expected: its starts are not warnings.
func TestStartLevel(t *testing.T) {
	for _, tc := range []struct {
		why  cdctable.StartReason
		want slog.Level
	}{
		{cdctable.StartFromTxn, slog.LevelInfo},
		{cdctable.StartReplay, slog.LevelInfo},
		{cdctable.StartFromGroup, slog.LevelInfo},
		{cdctable.StartFromReset, slog.LevelInfo},
		{cdctable.StartAheadOfDelta, slog.LevelWarn},
	} {
		require.Equal(t, tc.want, startLevel(tc.why), string(tc.why))
	}
}
