// Package procstatus reads Linux's /proc/PID/status memory lines, for the
// binary's heap profiler and the benchmarks that sample processes.
package procstatus

import (
	"bytes"
	"os"
	"strconv"
)

// Field reads one "Key:  N kB" line (key with its colon, as "VmRSS:") of
// the status file at path, in bytes; 0 when the file or the line is
// missing or unreadable.
func Field(path, key string) uint64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for line := range bytes.Lines(b) {
		rest, ok := bytes.CutPrefix(line, []byte(key))
		if !ok {
			continue
		}
		kb, err := strconv.ParseUint(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte("kB")))), 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}

// Of is the status file of process pid.
func Of(pid int) string { return "/proc/" + strconv.Itoa(pid) + "/status" }
