//go:build !unix

package merge

import "time"

// processCPU is not measured here: the benchmarks report 0 CPU.
func processCPU() time.Duration { return 0 }
