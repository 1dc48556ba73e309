package dir

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/viaduct-mirror/viaduct/storage"
)

// QuarantineDir, in the store's root, keeps the bytes of the blobs the
// fixity audit found not to hash to their key, for an operator to look
// at. Nothing reads them back: a quarantined blob is no longer under its
// key, so it is never served, and the next commit of the right bytes
// stores them afresh.
const QuarantineDir = "quarantine"

// Quarantine moves the blob out from under its key, into
// root/quarantine/<key>.<unix nanoseconds>: a blob file is renamed (its
// bytes are never rewritten), a packed blob's bytes are copied there and
// its row deleted, so that its record in the pack is no longer reachable
// (a compaction drops it). A blob that is not stored is not an error, so
// that an audit interrupted after the move can simply run again. The
// returned path is where the bytes went, empty when there were none.
func (s *Store) Quarantine(ctx context.Context, key string) (string, error) {
	if err := storage.CheckKey(key); err != nil {
		return "", err
	}
	qdir := filepath.Join(s.root, QuarantineDir)
	if err := os.MkdirAll(qdir, 0o755); err != nil {
		return "", fmt.Errorf("quarantining blob %s: %w", key, err)
	}
	dst := filepath.Join(qdir, key+"."+strconv.FormatInt(time.Now().UnixNano(), 10))
	if s.packs != nil {
		moved, err := s.quarantinePacked(ctx, key, dst)
		if err != nil || moved {
			return dst, err
		}
	}
	p := s.path(key)
	switch err := os.Rename(p, dst); {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("quarantining blob %s: %w", key, err)
	}
	if err := errors.Join(syncDir(filepath.Dir(p)), syncDir(qdir)); err != nil {
		return dst, fmt.Errorf("quarantining blob %s: %w", key, err)
	}
	return dst, nil
}

// quarantinePacked copies a packed blob's bytes to dst, synced, then
// deletes its row; moved is false when the blob is not packed.
func (s *Store) quarantinePacked(ctx context.Context, key, dst string) (moved bool, err error) {
	b, ok, err := s.openPacked(ctx, key)
	if err != nil || !ok {
		return false, err
	}
	defer b.Close()
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return false, fmt.Errorf("quarantining blob %s: %w", key, err)
	}
	_, err = io.Copy(f, b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = syncDir(filepath.Dir(dst))
	}
	if err != nil {
		return false, fmt.Errorf("quarantining blob %s: keeping its bytes: %w", key, err)
	}
	if _, err := s.packs.remove(ctx, key, time.Time{}); err != nil {
		return false, fmt.Errorf("quarantining blob %s: pack index: %w", key, err)
	}
	return true, nil
}
