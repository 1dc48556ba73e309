package dir

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/viaduct-mirror/viaduct/storage"
)

var _ storage.Objects = (*Store)(nil)

// objectPath is where a named object is: root/<name>, under a prefix
// (snapshots/) that is no fan-out directory, so List never takes it for
// a blob.
func (s *Store) objectPath(name string) string {
	return filepath.Join(s.root, filepath.FromSlash(name))
}

// PutObject writes the object to a temporary file, synced, then renames
// it into place and syncs its directory.
func (s *Store) PutObject(ctx context.Context, name string, r io.Reader, size int64) error {
	if err := storage.CheckObjectName(name); err != nil {
		return err
	}
	p := s.objectPath(name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("writing object %s: %w", name, err)
	}
	f, err := os.CreateTemp(s.tmp, "object-*")
	if err != nil {
		return fmt.Errorf("writing object %s: %w", name, err)
	}
	defer os.Remove(f.Name())
	n, err := io.Copy(f, r)
	if err == nil && size >= 0 && n != size {
		err = fmt.Errorf("%d bytes written, %d expected", n, size)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err == nil {
		err = syncDir(filepath.Dir(p))
	}
	if err != nil {
		return fmt.Errorf("writing object %s in %s: %w", name, s.root, err)
	}
	return nil
}

// GetObject opens the object's file.
func (s *Store) GetObject(ctx context.Context, name string) (io.ReadCloser, error) {
	if err := storage.CheckObjectName(name); err != nil {
		return nil, fmt.Errorf("%w: %w", err, storage.ErrNotFound)
	}
	f, err := os.Open(s.objectPath(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("object %s in %s: %w", name, s.root, storage.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("object %s: %w", name, err)
	}
	return f, nil
}

// ListObjects walks the directory of prefix.
func (s *Store) ListObjects(ctx context.Context, prefix string, fn func(storage.ObjectInfo) error) error {
	top := strings.SplitN(prefix, "/", 2)[0] + "/"
	if err := storage.CheckObjectName(top + "x"); err != nil {
		return err
	}
	base := filepath.Join(s.root, filepath.FromSlash(top))
	err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			return ctx.Err()
		}
		rel, err := filepath.Rel(s.root, p)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		if !strings.HasPrefix(name, prefix) {
			return nil
		}
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		return fn(storage.ObjectInfo{Name: name, Size: fi.Size(), ModTime: fi.ModTime()})
	})
	if err != nil {
		return fmt.Errorf("listing objects %s in %s: %w", prefix, s.root, err)
	}
	return nil
}

// DeleteObject removes the object's file.
func (s *Store) DeleteObject(ctx context.Context, name string) error {
	if err := storage.CheckObjectName(name); err != nil {
		return err
	}
	p := s.objectPath(name)
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("deleting object %s: %w", name, err)
	}
	return syncDir(filepath.Dir(p))
}
