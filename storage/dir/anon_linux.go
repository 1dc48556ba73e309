package dir

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// openAnon opens a new file without a name in dir (O_TMPFILE, Linux
// 3.11 and later on ext4, XFS, btrfs, tmpfs). It takes no lock on dir and
// leaves no entry to remove, where a named temporary costs a create and
// an unlink in the one directory every commit uses: under concurrent
// commits those two were most of a commit's CPU time. A crash before the
// file is linked leaves nothing behind: the file system frees it.
//
// With direct, the file's writes bypass the page cache (O_DIRECT): the
// disk reads each aligned buffer from the writer's memory (see
// Store.direct).
func openAnon(dir string, direct bool) (*os.File, error) {
	flags := unix.O_TMPFILE | unix.O_WRONLY | unix.O_CLOEXEC
	if direct {
		flags |= unix.O_DIRECT
	}
	fd, err := unix.Open(dir, flags, 0o600)
	if err != nil {
		return nil, &os.PathError{Op: "open anonymous file in", Path: dir, Err: err}
	}
	return os.NewFile(uintptr(fd), filepath.Join(dir, "(anonymous)")), nil
}

// linkAnon gives the anonymous file f the name dest. Like link(2) it
// fails with an error matching fs.ErrExist when dest exists, and never
// replaces it. It goes through /proc/self/fd, which needs no privilege
// (linkat's AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH).
func linkAnon(f *os.File, dest string) error {
	fd := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
	if err := unix.Linkat(unix.AT_FDCWD, fd, unix.AT_FDCWD, dest, unix.AT_SYMLINK_FOLLOW); err != nil {
		return &os.LinkError{Op: "link", Old: f.Name(), New: dest, Err: err}
	}
	return nil
}

// anonWorks reports whether anonymous files can be made in tmp and
// linked: the file system must support O_TMPFILE and /proc be mounted.
// It links a probe into tmp and removes it.
func anonWorks(tmp string) bool {
	f, err := openAnon(tmp, false)
	if err != nil {
		return false
	}
	defer f.Close()
	probe := filepath.Join(tmp, fmt.Sprintf("probe-%d", os.Getpid()))
	if err := linkAnon(f, probe); err != nil {
		return false
	}
	return os.Remove(probe) == nil
}
