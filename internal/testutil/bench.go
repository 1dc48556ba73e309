package testutil

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// CPUTime is the CPU time, user and system, the process has used so far.
// On a shared machine a benchmark's CPU time per operation tells a
// change's cost better than the wall clock.
func CPUTime(b testing.TB) time.Duration {
	user, sys := CPUTimes(b)
	return user + sys
}

// CPUTimes is CPUTime in its two parts: user and system (kernel) time.
func CPUTimes(b testing.TB) (user, sys time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// WrittenBytes is how many bytes the process has caused to be written to
// storage so far (write_bytes in /proc/self/io), or 0 where the kernel
// does not say.
func WrittenBytes(b testing.TB) int64 { return procIO(b, "write_bytes") }

// HandedBytes is how many bytes the process has passed to write calls so
// far (wchar in /proc/self/io), or 0 where the kernel does not say. Unlike
// WrittenBytes it counts what went to a file deleted before write-back,
// such as SQLite's temporary files: kernel work all the same, and written
// to the disk after all when something syncs the whole file system.
func HandedBytes(b testing.TB) int64 { return procIO(b, "wchar") }

// procIO reads one counter of /proc/self/io.
func procIO(b testing.TB, key string) int64 {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, key+": "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				b.Fatalf("/proc/self/io: %q: %v", line, err)
			}
			return n
		}
	}
	return 0
}
