package dir

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// openSyncFS returns a round that flushes the whole file system holding
// root with syncfs(2): every dirty file and directory on it, in one
// journal commit and one cache flush, however many blobs the round
// covers. It needs Linux 5.8 or later, where syncfs reports write-back
// errors that happened since the descriptor was opened; on older kernels
// it returns nil and the store syncs each file and directory instead.
// The descriptor is opened before any blob is written and held for the
// store's life (the runtime closes it when the Store is collected), so no
// error of a blob's write-back can happen before it.
func openSyncFS(root string) (func([]string) error, error) {
	if !syncfsReportsErrors() {
		return nil, nil
	}
	d, err := os.Open(root)
	if err != nil {
		return nil, err
	}
	return func([]string) error {
		if err := unix.Syncfs(int(d.Fd())); err != nil {
			return fmt.Errorf("syncfs %s: %w", root, err)
		}
		return nil
	}, nil
}

// syncfsReportsErrors reports whether the kernel is 5.8 or later.
func syncfsReportsErrors() bool {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return false
	}
	major, rest, _ := strings.Cut(unix.ByteSliceToString(u.Release[:]), ".")
	ma, mi := leadingInt(major), leadingInt(rest)
	return ma > 5 || ma == 5 && mi >= 8
}

// leadingInt is the number s starts with ("8-rc1": 8), -1 for none.
func leadingInt(s string) int {
	end := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(s)
	}
	n, err := strconv.Atoi(s[:end])
	if err != nil {
		return -1
	}
	return n
}
