//go:build linux || darwin || freebsd || netbsd || openbsd

package node

import (
	"fmt"
	"syscall"
)

// freeSpace is what the file system holding dir has left for an
// unprivileged writer (the node is one), and its size.
func freeSpace(dir string) (free, total uint64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, 0, fmt.Errorf("reading the free space of %s: %w", dir, err)
	}
	return uint64(st.Bavail) * uint64(st.Bsize), uint64(st.Blocks) * uint64(st.Bsize), nil
}
