package dir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// linkTo gives the temporary file the name dest, failing if dest exists.
func (w *writer) linkTo(dest string) error {
	if w.anon {
		return linkAnon(w.f, dest)
	}
	return os.Link(w.f.Name(), dest)
}

// tmpGone reports whether a failed link failed because the temporary
// itself is missing, which no directory made again can fix.
func (w *writer) tmpGone() bool {
	if w.anon {
		return false // open, so there
	}
	_, err := os.Stat(w.f.Name())
	return err != nil
}

// link links w's temporary file as dest, the path of key, creating
// dest's fan-out directories unless this process knows they exist. When
// a directory it knew of is gone (removed under the store), it is made
// again and the link tried once more.
func (s *Store) link(key string, w *writer, dest string) error {
	if !s.fanOut.known(key) {
		if err := makeDirs(filepath.Dir(dest)); err != nil {
			return err
		}
		s.fanOut.setKnown(key)
	}
	err := w.linkTo(dest)
	if !errors.Is(err, fs.ErrNotExist) || w.tmpGone() {
		return err
	}
	s.fanOut.forget(key)
	if err := makeDirs(filepath.Dir(dest)); err != nil {
		return err
	}
	s.fanOut.setKnown(key)
	return w.linkTo(dest)
}
