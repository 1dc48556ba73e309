package dir

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/viaduct-mirror/viaduct/storage"
)

var _ storage.Sweeper = (*Store)(nil)

// List walks the fan-out directories and calls fn for each blob file:
// names that are not keys (the layout file, temporaries) are skipped.
// Then it lists the packed blobs.
func (s *Store) List(ctx context.Context, fn func(storage.Info) error) error {
	packs := filepath.Join(s.root, "packs")
	err := filepath.WalkDir(s.root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed under the walk
			}
			return err
		}
		if d.IsDir() {
			if path == s.tmp || path == packs {
				return filepath.SkipDir
			}
			return ctx.Err()
		}
		key := d.Name()
		if storage.CheckKey(key) != nil || path != s.path(key) {
			return nil
		}
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		return fn(info(key, fi))
	})
	if err == nil && s.packs != nil {
		err = s.listPacked(ctx, fn)
	}
	if err != nil {
		return fmt.Errorf("listing blob directory %s: %w", s.root, err)
	}
	return nil
}

// Touch sets the blob file's modification time to now.
func (s *Store) Touch(ctx context.Context, key string) (storage.Info, error) {
	if err := storage.CheckKey(key); err != nil {
		return storage.Info{}, err
	}
	now := time.Now()
	if s.packs != nil {
		loc, ok, err := s.packs.touch(ctx, key, now)
		if err != nil {
			return storage.Info{}, fmt.Errorf("blob %s: pack index: %w", key, err)
		}
		if ok {
			return loc.info(key), nil
		}
	}
	if err := os.Chtimes(s.path(key), now, now); err != nil {
		return storage.Info{}, notFound(key, err)
	}
	return s.Stat(ctx, key)
}

// DeleteIdle moves the blob's file into the temporary directory first, so
// that a commit or touch racing with it either came before (the moved
// file's time says so, and it is moved back) or finds the name gone (and
// stores the bytes again): the decision is taken on a file no one else
// can reach any more. A packed blob's row is deleted in one statement
// that checks its time, which a touch or commit updates under the same
// lock.
func (s *Store) DeleteIdle(ctx context.Context, key string, since time.Time) (bool, error) {
	if err := storage.CheckKey(key); err != nil {
		return false, err
	}
	if s.packs != nil {
		gone, err := s.packs.remove(ctx, key, since)
		if err != nil {
			return false, fmt.Errorf("deleting blob %s: pack index: %w", key, err)
		}
		if gone {
			return true, nil
		}
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	p, trash := s.path(key), filepath.Join(s.tmp, "gc-"+key+"-"+hex.EncodeToString(b[:]))
	switch err := os.Rename(p, trash); {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("deleting blob %s: %w", key, err)
	}
	fi, err := os.Stat(trash)
	if err != nil {
		return false, fmt.Errorf("deleting blob %s: %w", key, err)
	}
	if !fi.ModTime().Before(since) {
		// Touched or committed again meanwhile: it stays. A commit that
		// linked the same bytes since the move already put them back.
		if err := os.Link(trash, p); err != nil && !errors.Is(err, fs.ErrExist) {
			return false, fmt.Errorf("keeping blob %s, touched at %s: %w", key, fi.ModTime(), err)
		}
		os.Remove(trash)
		return false, nil
	}
	if err := os.Remove(trash); err != nil {
		return false, fmt.Errorf("deleting blob %s: %w", key, err)
	}
	if err := syncDir(filepath.Dir(p)); err != nil {
		return false, fmt.Errorf("deleting blob %s: %w", key, err)
	}
	return true, nil
}
