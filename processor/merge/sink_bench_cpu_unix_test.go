//go:build unix

package merge

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) the process has used, which
// unlike wall time does not grow when other processes share the machine.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
