package dir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// LayoutFile, in the store's root, records its fan-out depth, so that a
// store keeps the layout it was made with whatever the defaults become. It
// is the one file in the root that is not a blob or a temporary.
const LayoutFile = "layout"

// The two layouts. A store made now has one level of 256 directories,
// root/ab/k: a hundred thousand blobs then make 256 directories, not up
// to 65,536 (about 190 MB of directory blocks and a mkdir for most of the
// first blobs, a quarter of a fresh store's cost per blob on ext4), and
// directories of tens of thousands of entries are what ext4 and XFS index
// well. Stores made before the layout file existed have two levels,
// root/ab/cd/k, and keep them.
const (
	oneLevel = 1
	twoLevel = 2
)

// openLayout reads the store's layout from its layout file. A root
// without one is either a store made before the file existed, recognised
// by a two-hex-digit directory holding another, and recorded as two-level,
// or a new one, recorded as one-level. The file is written to a
// temporary, synced and renamed, and the root synced, before any blob is
// stored under the layout it names.
func openLayout(root string) (int, error) {
	b, err := os.ReadFile(filepath.Join(root, LayoutFile))
	switch {
	case err == nil:
		switch strings.TrimSpace(string(b)) {
		case "fan-out 1":
			return oneLevel, nil
		case "fan-out 2":
			return twoLevel, nil
		}
		return 0, fmt.Errorf("%s: %q is not a layout this version knows (fan-out 1 or fan-out 2)", filepath.Join(root, LayoutFile), b)
	case !errors.Is(err, fs.ErrNotExist):
		return 0, err
	}
	depth, err := guessLayout(root)
	if err != nil {
		return 0, err
	}
	if err := writeLayout(root, depth); err != nil {
		return 0, fmt.Errorf("recording the layout: %w", err)
	}
	return depth, nil
}

// guessLayout tells a store made before layout files from a new one.
func guessLayout(root string) (int, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		if !e.IsDir() || !isHexPair(e.Name()) {
			continue
		}
		sub, err := os.ReadDir(filepath.Join(root, e.Name()))
		if err != nil {
			return 0, err
		}
		for _, s := range sub {
			if s.IsDir() && isHexPair(s.Name()) {
				return twoLevel, nil
			}
		}
	}
	return oneLevel, nil
}

func isHexPair(name string) bool {
	return len(name) == 2 && strings.Trim(name, "0123456789abcdef") == ""
}

func writeLayout(root string, depth int) error {
	tmp := filepath.Join(root, LayoutFile+".tmp")
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "fan-out %d\n", depth)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(root, LayoutFile))
	}
	if err == nil {
		err = syncDir(root)
	}
	return err
}
