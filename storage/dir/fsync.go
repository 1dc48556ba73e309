package dir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// makeDirs creates a blob's fan-out directory (root/ab/cd) when it is
// missing, and syncs each parent that gained an entry, so a blob linked into
// a new directory is still reachable after a crash.
func (s *Store) makeDirs(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	parent := filepath.Dir(dir)
	for _, d := range []string{parent, dir} {
		if err := os.Mkdir(d, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		if err := syncDir(filepath.Dir(d)); err != nil {
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
