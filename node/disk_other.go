//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package node

import "errors"

// freeSpace is unknown where statfs is not there to ask.
func freeSpace(string) (free, total uint64, err error) {
	return 0, 0, errors.New("free space is not read on this system")
}
