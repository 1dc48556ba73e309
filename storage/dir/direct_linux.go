package dir

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/viaduct-mirror/viaduct/storage"
)

// openAnonDirect opens a new file without a name in dir, as openAnon does,
// whose writes bypass the page cache (O_DIRECT): the disk reads each
// aligned buffer from the writer's memory. See Store.direct.
func openAnonDirect(dir string) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC|unix.O_DIRECT, 0o600)
	if err != nil {
		return nil, &os.PathError{Op: "open anonymous file for direct writes in", Path: dir, Err: err}
	}
	return os.NewFile(uintptr(fd), filepath.Join(dir, "(anonymous)")), nil
}

// endDirect turns f's direct writes off: its later writes go through the
// page cache.
func endDirect(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	err = rc.Control(func(fd uintptr) {
		var fl int
		if fl, ferr = unix.FcntlInt(fd, unix.F_GETFL, 0); ferr == nil {
			_, ferr = unix.FcntlInt(fd, unix.F_SETFL, fl&^unix.O_DIRECT)
		}
	})
	if err == nil {
		err = ferr
	}
	if err != nil {
		return &os.PathError{Op: "end direct writes to", Path: f.Name(), Err: err}
	}
	return nil
}

// refusedDirect reports whether err is a file system's refusal of a
// direct write (EINVAL: an alignment it needs and was not given).
func refusedDirect(err error) bool { return errors.Is(err, syscall.EINVAL) }

// directWorks reports whether anonymous files in tmp take direct writes:
// some file systems refuse O_DIRECT at open (tmpfs before Linux 6.6),
// others at the first write.
func directWorks(tmp string) bool {
	f, err := openAnonDirect(tmp)
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = f.Write(storage.AlignedBuffer(storage.DirectAlign))
	return err == nil
}
