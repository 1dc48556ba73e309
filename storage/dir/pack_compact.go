package dir

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/viaduct-mirror/viaduct/storage"
)

var _ storage.Compactor = (*Store)(nil)

// compactChunk bounds the bytes compaction holds in memory at once.
const compactChunk = 8 << 20

// Compact rewrites every pack at least half of which no index row points
// at (blobs deleted, records a crash left unindexed): the records still
// indexed are copied to the active pack, verified against their keys on
// the way, and the old pack is removed once no row points into it. It
// returns the bytes freed. A record whose bytes no longer match its key
// stops the compaction of its pack, which is kept, and is reported.
func (s *Store) Compact(ctx context.Context) (int64, error) {
	if s.packs == nil {
		return 0, nil
	}
	p := s.packs
	live := map[int64]int64{}
	rows, err := p.db.QueryContext(ctx, `SELECT id, live FROM packs`)
	if err != nil {
		return 0, fmt.Errorf("compacting packs in %s: %w", p.dir, err)
	}
	for rows.Next() {
		var id, n int64
		if err := rows.Scan(&id, &n); err != nil {
			rows.Close()
			return 0, fmt.Errorf("compacting packs in %s: %w", p.dir, err)
		}
		live[id] = n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("compacting packs in %s: %w", p.dir, err)
	}
	var freed int64
	for id, n := range live {
		if id == p.active.Load() {
			continue
		}
		fi, err := os.Stat(p.path(id))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if n == 0 {
				p.db.ExecContext(ctx, `DELETE FROM packs WHERE id = ? AND live = 0`, id)
			}
			continue
		case err != nil:
			return freed, fmt.Errorf("compacting pack %s: %w", p.path(id), err)
		case fi.Size()-n < fi.Size()/2:
			continue
		}
		if err := s.compactPack(ctx, id); err != nil {
			return freed, fmt.Errorf("compacting pack %s: %w", p.path(id), err)
		}
		var left int64
		if err := p.db.QueryRowContext(ctx, `SELECT live FROM packs WHERE id = ?`, id).Scan(&left); err != nil {
			return freed, fmt.Errorf("compacting pack %s: %w", p.path(id), err)
		}
		if left != 0 {
			continue
		}
		if err := os.Remove(p.path(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return freed, fmt.Errorf("removing compacted pack: %w", err)
		}
		if err := syncDir(p.dir); err != nil {
			return freed, fmt.Errorf("removing compacted pack %s: %w", p.path(id), err)
		}
		if _, err := p.db.ExecContext(ctx, `DELETE FROM packs WHERE id = ? AND live = 0`, id); err != nil {
			return freed, fmt.Errorf("removing compacted pack %s: %w", p.path(id), err)
		}
		freed += fi.Size()
	}
	return freed, nil
}

// compactPack copies the records of pack id that the index still points
// at to the active pack, chunk by chunk.
func (s *Store) compactPack(ctx context.Context, id int64) error {
	p := s.packs
	f, err := os.Open(p.path(id))
	if err != nil {
		return err
	}
	defer f.Close()
	rows, err := p.db.QueryContext(ctx, `SELECT key, off, len, mtime FROM blobs WHERE pack = ?`, id)
	if err != nil {
		return err
	}
	var locs []packLoc
	var keys []string
	for rows.Next() {
		var k []byte
		l := packLoc{pack: id}
		if err := rows.Scan(&k, &l.off, &l.size, &l.mtime); err != nil {
			rows.Close()
			return err
		}
		locs, keys = append(locs, l), append(keys, hex.EncodeToString(k))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	var chunk []packRecord
	held := 0
	for i, l := range locs {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec := make([]byte, packHeaderLen+l.size)
		if _, err := f.ReadAt(rec, l.off); err != nil {
			return fmt.Errorf("reading blob %s at %d: %w", keys[i], l.off, err)
		}
		if err := checkRecord(rec, keys[i]); err != nil {
			return fmt.Errorf("blob %s at %d: %w", keys[i], l.off, err)
		}
		from := l
		chunk = append(chunk, packRecord{key: keys[i], data: rec[packHeaderLen:], mtime: l.mtime, from: &from})
		if held += len(rec); held >= compactChunk {
			if err := p.put(chunk...); err != nil {
				return err
			}
			chunk, held = nil, 0
		}
	}
	if len(chunk) == 0 {
		return nil
	}
	return p.put(chunk...)
}

// checkRecord verifies a whole record: its header names key and its
// bytes hash to it.
func checkRecord(rec []byte, key string) error {
	if err := checkHeader(rec[:packHeaderLen], key, int64(binary.BigEndian.Uint32(rec[36:packHeaderLen]))); err != nil {
		return err
	}
	sum := sha256.Sum256(rec[packHeaderLen:])
	if hex.EncodeToString(sum[:]) != key {
		return errPackRecord
	}
	return nil
}
