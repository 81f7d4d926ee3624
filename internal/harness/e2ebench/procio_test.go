package e2ebench

import (
	"os"
	"testing"
)

func TestParseDiskstats(t *testing.T) {
	const stats = ` 254       0 vda 53687 6922 3900386 37180 84725 136972 33128712 225193 0 32332 272627 29999 40 8762432 5250 14290 5003
 254       1 vda1 10 0 20 1 30 0 40 2 0 5 6 0 0 0 0 0 0
`
	for _, tc := range []struct {
		name         string
		major, minor uint64
		want         diskStat
		err          bool
	}{
		{"disk", 254, 0, diskStat{Device: "vda", ReadBytes: 3900386 * 512, Writes: 84725, WriteBytes: 33128712 * 512, BusyMillis: 32332, WeightedWait: 272627}, false},
		{"partition", 254, 1, diskStat{Device: "vda1", ReadBytes: 20 * 512, Writes: 30, WriteBytes: 40 * 512, BusyMillis: 5, WeightedWait: 6}, false},
		{"missing", 8, 0, diskStat{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseDiskstats([]byte(stats), tc.major, tc.minor)
			if (err != nil) != tc.err || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v, error %v", got, err, tc.want, tc.err)
			}
		})
	}
}

func TestReadProcIOAndDisk(t *testing.T) {
	if _, err := os.Stat("/proc/self/io"); err != nil {
		t.Skip("no /proc/self/io")
	}
	io, err := readProcIO(os.Getpid())
	if err != nil || io.ReadCalls == 0 {
		t.Fatalf("own I/O counters: %+v, %v", io, err)
	}
	if _, err := diskOf(t.TempDir()); err != nil {
		t.Logf("the temporary directory's disk is not in /proc/diskstats (overlay or tmpfs): %v", err)
	}
}

func TestPhaseOf(t *testing.T) {
	before := map[string]float64{"cdc2delta_commit_seconds_count": 10, "cdc2delta_commit_seconds_sum": 5,
		"cdc2delta_maintenance_seconds_sum{kind=compact}": 1, "cdc2delta_maintenance_seconds_count{kind=compact}": 1}
	after := map[string]float64{"cdc2delta_commit_seconds_count": 30, "cdc2delta_commit_seconds_sum": 45,
		"cdc2delta_maintenance_seconds_sum{kind=compact}": 7, "cdc2delta_maintenance_seconds_count{kind=compact}": 3,
		"cdc2delta_maintenance_seconds_sum{kind=vacuum}": 2, "cdc2delta_maintenance_seconds_count{kind=vacuum}": 4}
	p := phaseOf(before, after)
	if p.Commits != 20 || p.CommitSeconds != 40 || p.MaintenanceSeconds["compact"] != 6 || p.Maintenance["compact"] != 2 ||
		p.MaintenanceSeconds["vacuum"] != 2 || p.Maintenance["vacuum"] != 4 {
		t.Fatalf("phase %+v", p)
	}
	if phaseOf(nil, after) != nil {
		t.Fatal("a missing scrape gave a phase")
	}
}
