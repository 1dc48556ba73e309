package dir

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/viaduct-mirror/viaduct/storage"
)

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
	f, err := openAnon(tmp, true)
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = f.Write(storage.AlignedBuffer(storage.DirectAlign))
	return err == nil
}
