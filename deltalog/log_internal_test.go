package deltalog

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseLogName(t *testing.T) {
	tests := []struct {
		name string
		want logName
	}{
		{"00000000000000000007.json", logName{kind: kindCommit, version: 7}},
		{"00000000000000000010.checkpoint.parquet", logName{kind: kindCheckpointClassic, version: 10}},
		{"00000000000000000010.checkpoint.0000000002.0000000003.parquet", logName{kind: kindCheckpointMultiPart, version: 10, part: 2, parts: 3}},
		{"00000000000000000010.checkpoint.80a083e8-7026-4e79-81be-64bd76c43a11.json", logName{kind: kindCheckpointV2, version: 10}},
		{"00000000000000000010.checkpoint.80a083e8-7026-4e79-81be-64bd76c43a11.parquet", logName{kind: kindCheckpointV2, version: 10}},
		{"00000000000000000010.crc", logName{kind: kindChecksum, version: 10}},
		{"00000000000000000004.00000000000000000006.compacted.json", logName{kind: kindCompacted, version: 4}},
		{"00000000000000000006.00000000000000000004.compacted.json", logName{}},
		{".00000000000000000007.json.crc", logName{}},
		{"_commit_3f1c.json.tmp", logName{}},
		{"0000000000000000007.json", logName{}},
		{"0000000000000000000a.json", logName{}},
		{"00000000000000000010.checkpoint.0000000004.0000000003.parquet", logName{}},
		{"00000000000000000010.checkpoint.not-a-uuid.json", logName{}},
		{"00000000000000000007.json.tmp", logName{}},
		{"_last_checkpoint", logName{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, parseLogName(tc.name))
		})
	}
}

// fakeLog is a set of _delta_log paths.
type fakeLog map[string]bool

func (f fakeLog) listing() *logListing {
	var infos []ObjectInfo
	for p := range f {
		infos = append(infos, ObjectInfo{Path: p, ModTime: time.Unix(0, 0)})
	}
	return classifyLog(infos)
}

func logFiles(names ...string) fakeLog {
	f := fakeLog{}
	for _, n := range names {
		f[logDir+n] = true
	}
	return f
}

func commits(from, to int64) []string {
	var out []string
	for v := from; v <= to; v++ {
		out = append(out, fmt.Sprintf("%020d.json", v))
	}
	return out
}

func TestPlanFor(t *testing.T) {
	cp := func(v int64) string { return fmt.Sprintf("%020d.checkpoint.parquet", v) }
	part := func(v int64, i, n int) string { return fmt.Sprintf("%020d.checkpoint.%010d.%010d.parquet", v, i, n) }
	tests := []struct {
		name      string
		files     []string
		target    int64
		wantCP    int64 // -1: none
		wantFirst int64
		wantErr   error
	}{
		{"json only", commits(0, 5), 5, -1, 0, nil},
		{"checkpoint", append(commits(0, 12), cp(10)), 12, 10, 11, nil},
		{"checkpoint at target", append(commits(0, 10), cp(10)), 10, 10, -1, nil},
		{"time travel before checkpoint", append(commits(0, 12), cp(10)), 9, -1, 0, nil},
		{"cleaned log", append(commits(10, 12), cp(10)), 12, 10, 11, nil},
		{"gap after checkpoint", append(append(commits(10, 11), commits(13, 14)...), cp(10)), 14, 0, 0, ErrLogGap},
		{"incomplete multipart ignored", append(commits(0, 6), part(5, 1, 2), cp(3)), 6, 3, 4, nil},
		{"complete multipart", append(commits(0, 6), part(5, 1, 2), part(5, 2, 2)), 6, 5, 6, nil},
		{"before earliest", append(commits(10, 12), cp(10)), 5, 0, 0, ErrNotExist},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ll := logFiles(tc.files...).listing()
			plan, err := ll.planFor(tc.target, nil)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			if tc.wantCP < 0 {
				require.Nil(t, plan.checkpoint)
			} else {
				require.NotNil(t, plan.checkpoint)
				require.Equal(t, tc.wantCP, plan.checkpoint.version)
			}
			if tc.wantFirst < 0 {
				require.Empty(t, plan.commits)
			} else {
				require.Equal(t, tc.wantFirst, plan.commits[0].version)
				require.Equal(t, tc.target, plan.commits[len(plan.commits)-1].version)
			}
		})
	}
}

func TestParseInterval(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{"interval 7 days", 7 * 24 * time.Hour, false},
		{"interval 1 week", 7 * 24 * time.Hour, false},
		{"INTERVAL 2 hours 30 minutes", 150 * time.Minute, false},
		{"168 hours", 168 * time.Hour, false},
		{"interval 1 day", 24 * time.Hour, false},
		{"interval 1 month", 0, true},
		{"interval", 0, true},
		{"interval x days", 0, true},
		{"interval 99999999999999999 weeks", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			d, err := parseInterval(tc.in)
			if tc.bad {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, d)
		})
	}
}
