package dir

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"

	"github.com/viaduct-mirror/viaduct/storage"
)

var _ storage.Compactor = (*Store)(nil)

// compactChunk bounds the bytes compaction holds in memory at once.
const compactChunk = 8 << 20

// Compact rewrites every closed pack at least half of which no index
// row points at (blobs deleted, records a crash left unindexed): the
// records still indexed are copied to the active pack, verified against
// their keys on the way, and the old pack is removed once no row points
// into it. It returns the bytes freed. A record whose bytes no longer
// match its key stops the compaction of its pack, which is kept, and is
// reported.
func (s *Store) Compact(ctx context.Context) (int64, error) {
	if s.packs == nil {
		return 0, nil
	}
	p := s.packs
	live, err := p.live(ctx)
	if err != nil {
		return 0, fmt.Errorf("compacting packs in %s: %w", p.dir, err)
	}
	ids, err := p.files()
	if err != nil {
		return 0, fmt.Errorf("compacting packs in %s: %w", p.dir, err)
	}
	var freed int64
	for _, id := range ids {
		if id == p.active.Load() {
			continue
		}
		// A pack closed since live was read may hold more than it
		// says; compactPack and the check below read the index afresh.
		fi, err := os.Stat(p.path(id))
		if err != nil {
			return freed, fmt.Errorf("compacting pack %s: %w", p.path(id), err)
		}
		if fi.Size()-live[id] < fi.Size()/2 {
			continue
		}
		if err := s.compactPack(ctx, id); err != nil {
			return freed, fmt.Errorf("compacting pack %s: %w", p.path(id), err)
		}
		var named bool
		if err := p.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM blobs WHERE pack = ?)`, id).Scan(&named); err != nil {
			return freed, fmt.Errorf("compacting pack %s: %w", p.path(id), err)
		}
		if named {
			continue
		}
		if err := os.Remove(p.path(id)); err != nil {
			return freed, fmt.Errorf("removing compacted pack: %w", err)
		}
		if err := syncDir(p.dir); err != nil {
			return freed, fmt.Errorf("removing compacted pack %s: %w", p.path(id), err)
		}
		freed += fi.Size()
	}
	return freed, nil
}

// live sums, for each pack, the bytes of the records the index names.
func (p *packs) live(ctx context.Context) (map[int64]int64, error) {
	rows, err := p.db.QueryContext(ctx, `SELECT pack, sum(len) + count(*) * ? FROM blobs GROUP BY pack`, packHeaderLen)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	live := map[int64]int64{}
	for rows.Next() {
		var id, n int64
		if err := rows.Scan(&id, &n); err != nil {
			return nil, err
		}
		live[id] = n
	}
	return live, rows.Err()
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
