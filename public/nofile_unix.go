//go:build unix

package public

import "syscall"

// openFileLimit is the process's soft limit on open files.
func openFileLimit() int {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil || r.Cur > 1<<30 {
		return 1024
	}
	return int(r.Cur)
}
