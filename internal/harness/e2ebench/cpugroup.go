package e2ebench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// cpuGroup is a CPU cgroup of its own that holds the processes started in
// it to a share of a core (the kernel's CFS quota), so that an instance
// gets the same CPU in every run whatever else runs on its core.
type cpuGroup struct {
	dir string
}

// cfsPeriod is the quota's period in microseconds (the kernel's default).
const cfsPeriod = 100_000

// newCPUGroup makes the cgroup name under the cpu controller, v1
// (/sys/fs/cgroup/cpu, cpu.cfs_quota_us) or v2 (/sys/fs/cgroup, cpu.max),
// limited to cores of CPU time.
func newCPUGroup(name string, cores float64) (*cpuGroup, error) {
	quota := int(cores * cfsPeriod)
	if quota < 1000 {
		return nil, fmt.Errorf("%w: a CPU quota of %g cores is below the kernel's 1 ms", ErrConfig, cores)
	}
	const v1, v2 = "/sys/fs/cgroup/cpu", "/sys/fs/cgroup"
	var files map[string]string
	var root string
	if _, err := os.Stat(filepath.Join(v1, "cpu.cfs_quota_us")); err == nil {
		root = v1
		files = map[string]string{"cpu.cfs_period_us": fmt.Sprint(cfsPeriod), "cpu.cfs_quota_us": fmt.Sprint(quota)}
	} else if c, err := os.ReadFile(filepath.Join(v2, "cgroup.controllers")); err == nil && strings.Contains(" "+string(c)+" ", " cpu ") {
		root = v2
		// Children get the cpu controller only when the parent hands it on;
		// an error here shows up as a missing cpu.max below.
		_ = os.WriteFile(filepath.Join(v2, "cgroup.subtree_control"), []byte("+cpu"), 0)
		files = map[string]string{"cpu.max": fmt.Sprintf("%d %d", quota, cfsPeriod)}
	} else {
		return nil, fmt.Errorf("%w: a CPU quota needs the cgroup cpu controller (v1 at %s or v2 at %s)", ErrConfig, v1, v2)
	}
	g := &cpuGroup{dir: filepath.Join(root, name)}
	if err := os.Mkdir(g.dir, 0o755); err != nil {
		return nil, fmt.Errorf("%w: making the CPU cgroup (root may be needed): %w", ErrConfig, err)
	}
	for f, v := range files {
		if err := os.WriteFile(filepath.Join(g.dir, f), []byte(v), 0); err != nil {
			return nil, errors.Join(fmt.Errorf("%w: setting %s of %s: %w", ErrConfig, f, g.dir, err), g.remove())
		}
	}
	return g, nil
}

// command returns argv run inside the group: a shell moves itself into it
// and then becomes argv, so the process is limited from its first
// instruction and keeps the shell's pid.
func (g *cpuGroup) command(argv ...string) []string {
	return append([]string{"sh", "-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, g.dir}, argv...)
}

// remove deletes the group, which its processes must have left (ended).
func (g *cpuGroup) remove() error {
	if err := os.Remove(g.dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing the CPU cgroup %s: %w", g.dir, err)
	}
	return nil
}
