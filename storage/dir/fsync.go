package dir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// fanOut remembers which fan-out directories (root/ab/cd) this process
// has made durable: their own entry in root/ab and root/ab's in root have
// been synced. Until then a blob linked into one also syncs its parents.
// A directory found on disk at start is not trusted: it may have been
// made by a process that stopped before syncing it.
type fanOut struct {
	mu      sync.Mutex
	durable [1 << 16]bool // by the key's first four hex digits
}

func fanOutIndex(key string) int {
	i, _ := strconv.ParseUint(key[:4], 16, 16)
	return int(i)
}

func (f *fanOut) isDurable(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.durable[fanOutIndex(key)]
}

func (f *fanOut) setDurable(key string) {
	f.mu.Lock()
	f.durable[fanOutIndex(key)] = true
	f.mu.Unlock()
}

// makeDirs creates a blob's fan-out directory (root/ab/cd) when it is
// missing. It syncs nothing: the commit that links a blob into the
// directory syncs it and, until the fan-out is known durable, its parents
// too, in one group with the other commits of the moment.
func makeDirs(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Mkdir(d, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	return nil
}

// syncDir flushes a directory's entries to disk, making a rename, link or
// remove inside it durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
