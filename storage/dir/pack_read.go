package dir

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/viaduct-mirror/viaduct/storage"
)

// packedBlob is an open packed blob: a section of its pack file, which
// it keeps open, so a compaction that removes the pack meanwhile does not
// take the bytes from under a reader.
type packedBlob struct {
	*io.SectionReader
	f    *os.File
	info storage.Info
}

func (b *packedBlob) Info() storage.Info { return b.info }
func (b *packedBlob) Close() error       { return b.f.Close() }

func (l packLoc) info(key string) storage.Info {
	return storage.Info{Key: key, Size: l.size, ModTime: time.Unix(0, l.mtime)}
}

// openPacked opens the blob from its pack; ok is false when it is not
// packed. A compaction may move the record between the index's answer
// and the open: the index is then asked again.
func (s *Store) openPacked(ctx context.Context, key string) (b storage.Blob, ok bool, err error) {
	for range 3 {
		loc, ok, err := s.packs.find(ctx, key)
		if err != nil {
			return nil, false, fmt.Errorf("blob %s: pack index: %w", key, err)
		}
		if !ok {
			return nil, false, nil
		}
		f, err := s.packs.open(loc)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, true, err
		}
		hdr := make([]byte, packHeaderLen)
		if _, err := f.ReadAt(hdr, loc.off); err != nil {
			f.Close()
			return nil, true, fmt.Errorf("reading pack %s at %d: %w", f.Name(), loc.off, err)
		}
		if err := checkHeader(hdr, key, loc.size); err != nil {
			f.Close()
			return nil, true, fmt.Errorf("pack %s at %d: %w", f.Name(), loc.off, err)
		}
		sr := io.NewSectionReader(f, loc.off+packHeaderLen, loc.size)
		return &packedBlob{SectionReader: sr, f: f, info: loc.info(key)}, true, nil
	}
	return nil, true, fmt.Errorf("blob %s: its pack was removed three times while it was opened", key)
}

// listPacked calls fn for every packed blob, a page of the index at a
// time, so that fn may delete what it is given.
func (s *Store) listPacked(ctx context.Context, fn func(storage.Info) error) error {
	after := []byte{0} // before every 32-byte key
	for {
		rows, err := s.packs.db.QueryContext(ctx,
			`SELECT key, len, mtime FROM blobs WHERE key > ? ORDER BY key LIMIT 1000`, after)
		if err != nil {
			return err
		}
		var page []storage.Info
		for rows.Next() {
			var k []byte
			var l packLoc
			if err := rows.Scan(&k, &l.size, &l.mtime); err != nil {
				rows.Close()
				return err
			}
			page = append(page, l.info(hex.EncodeToString(k)))
			after = k
		}
		if err := rows.Err(); err != nil {
			return err
		}
		rows.Close()
		for _, in := range page {
			if err := fn(in); err != nil {
				return err
			}
		}
		if len(page) < 1000 {
			return nil
		}
	}
}
