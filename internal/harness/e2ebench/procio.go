package e2ebench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// procIO is a process's I/O counters from /proc/PID/io: bytes that reached
// the storage layer, and read and write system calls.
type procIO struct {
	ReadBytes, WriteBytes, ReadCalls, WriteCalls uint64
}

func readProcIO(pid int) (procIO, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/io")
	if err != nil {
		return procIO{}, fmt.Errorf("reading the run's I/O counters: %w", err)
	}
	var io procIO
	fields := map[string]*uint64{"read_bytes": &io.ReadBytes, "write_bytes": &io.WriteBytes,
		"syscr": &io.ReadCalls, "syscw": &io.WriteCalls}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if p := fields[k]; ok && p != nil {
			if *p, err = strconv.ParseUint(strings.TrimSpace(v), 10, 64); err != nil {
				return procIO{}, fmt.Errorf("reading the run's I/O counters: %s: %w", k, err)
			}
		}
	}
	return io, nil
}

// diskStat is one block device's counters from /proc/diskstats; the
// machine's other processes count in them too.
type diskStat struct {
	Device                   string
	ReadBytes, WriteBytes    uint64
	Writes                   uint64 // write requests completed
	BusyMillis, WeightedWait uint64 // io_ticks and weighted time in queue, ms
}

// diskOf returns the counters of the device holding path.
func diskOf(path string) (diskStat, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return diskStat{}, fmt.Errorf("finding the disk of %s: %w", path, err)
	}
	major, minor := uint64(st.Dev>>8)&0xfff, uint64(st.Dev&0xff)|uint64(st.Dev>>12)&^0xff
	b, err := os.ReadFile("/proc/diskstats")
	if err != nil {
		return diskStat{}, fmt.Errorf("reading disk counters: %w", err)
	}
	return parseDiskstats(b, major, minor)
}

// parseDiskstats finds device major:minor in /proc/diskstats' text.
func parseDiskstats(b []byte, major, minor uint64) (diskStat, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || f[0] != strconv.FormatUint(major, 10) || f[1] != strconv.FormatUint(minor, 10) {
			continue
		}
		if len(f) < 14 {
			return diskStat{}, fmt.Errorf("reading disk counters: short line %q", sc.Text())
		}
		n := make([]uint64, len(f))
		for i := 3; i < len(f); i++ {
			var err error
			if n[i], err = strconv.ParseUint(f[i], 10, 64); err != nil {
				return diskStat{}, fmt.Errorf("reading disk counters of %s: %w", f[2], err)
			}
		}
		// Fields after the name: reads, merged, sectors read, ms reading,
		// writes, merged, sectors written, ms writing, in flight, io_ticks,
		// weighted ms. Sectors are 512 bytes whatever the device's.
		return diskStat{Device: f[2], ReadBytes: n[5] * 512, Writes: n[7], WriteBytes: n[9] * 512,
			BusyMillis: n[12], WeightedWait: n[13]}, nil
	}
	return diskStat{}, fmt.Errorf("reading disk counters: device %d:%d not in /proc/diskstats", major, minor)
}
