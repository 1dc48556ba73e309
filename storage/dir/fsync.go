package dir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
)

// fanOut remembers which fan-out directories (root/ab, or root/ab/cd in
// a two-level store) this process has made durable: the entries naming
// their path up to the root have been synced. Until then a blob linked
// into one also syncs its parents.
// A directory found on disk at start is not trusted: it may have been
// made by a process that stopped before syncing it.
//
// It also remembers which fan-out directories this process found or made,
// so that a commit into one does not ask the file system again: each ask
// costs a stat and two mkdirs, and a mkdir locks the parent directory
// that every other commit of the moment is also using. Both sets are
// bounded by the fan-out directories a store can have: 256, or 65,536
// with two levels.
type fanOut struct {
	digits  int // of the key naming its fan-out directory: 2 or 4
	mu      sync.Mutex
	durable [1 << 16]bool // by the key's first digits
	exists  [1 << 16]atomic.Bool
}

func (f *fanOut) index(key string) int {
	i, _ := strconv.ParseUint(key[:f.digits], 16, 16)
	return int(i)
}

func (f *fanOut) isDurable(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.durable[f.index(key)]
}

func (f *fanOut) setDurable(key string) {
	f.mu.Lock()
	f.durable[f.index(key)] = true
	f.mu.Unlock()
}

// known reports whether key's fan-out directory was found or made by
// this process.
func (f *fanOut) known(key string) bool { return f.exists[f.index(key)].Load() }

// setKnown records that key's fan-out directory exists.
func (f *fanOut) setKnown(key string) { f.exists[f.index(key)].Store(true) }

// forget drops key's fan-out directory from the known ones, after the
// file system said it is not there (someone removed it).
func (f *fanOut) forget(key string) { f.exists[f.index(key)].Store(false) }

// makeDirs creates a blob's fan-out directory when it is missing, and its
// parent only when that is missing too (root/ab of a two-level store): one
// mkdir in the usual case, whether the directory is new or not. It syncs
// nothing: the commit that links a blob into the directory syncs it and,
// until the fan-out is known durable, its parents too, in one group with
// the other commits of the moment.
func makeDirs(dir string) error {
	err := os.Mkdir(dir, 0o755)
	switch {
	case err == nil, errors.Is(err, fs.ErrExist):
		return nil
	case !errors.Is(err, fs.ErrNotExist):
		return err
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
