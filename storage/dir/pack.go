package dir

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/viaduct-mirror/viaduct/internal/sqliteconn"
	"golang.org/x/sys/unix"
)

// DefaultPackBelow is the size up to which a blob is packed rather than
// given a file of its own (see the package doc).
const DefaultPackBelow = 64 << 10

// packFileMax is the size at which a pack file is closed and the next
// one begun. Compaction rewrites what is left of a pack, so smaller
// packs free space in smaller steps.
const packFileMax = 64 << 20

// A record in a pack file is a header (packMagic, the blob's sha-256 as
// 32 bytes, its length as 4 bytes big-endian) followed by its bytes. The
// header makes a pack readable without its index: every record says
// which blob it holds, and the bytes prove it.
const packHeaderLen = 4 + 32 + 4

var packMagic = [4]byte{'v', 'd', 'p', '1'}

const packSchema = `
CREATE TABLE IF NOT EXISTS blobs (
	key   BLOB PRIMARY KEY, -- sha-256, 32 bytes
	pack  INTEGER NOT NULL,
	off   INTEGER NOT NULL, -- of the record's header
	len   INTEGER NOT NULL, -- of the blob
	mtime INTEGER NOT NULL  -- committed or touched, Unix nanoseconds
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS facts (
	name  TEXT PRIMARY KEY,
	value INTEGER NOT NULL
) WITHOUT ROWID;`

// filesFromFact names the fact, kept in the index, of the smallest blob
// the store may hold as a file of its own: one more than the least
// PackBelow any process has opened it with, 0 where a process had
// packing off (every blob a file), or where blobs had files before the
// index was made. A commit of a packed blob at least that long looks for
// such a file first, to touch it rather than pack a second copy; a
// smaller one goes straight to the pack, without a failed path lookup (2
// % of a baseline's CPU). An index made by a version that did not keep
// the fact, and holding blobs, is taken as 0.
const filesFromFact = "files_from"

// packs keeps small blobs as records appended to shared files, and an
// index of them in a SQLite database beside them (root/packs/index.db).
// A commit queues its record in the round being gathered (a grouper, as
// the sync rounds); a round, in one transaction of the index, inserts the
// rows of the records queued since the last round, touches instead the
// blobs the index holds already (write), writes the new records to the
// active pack and syncs it; the transaction is synced too. A blob is
// visible, to Open and Stat, once its row is; a crash before that leaves
// a record no row points at, which compaction reclaims.
type packs struct {
	dir   string
	db    *sql.DB
	group *grouper[*packBatch]
	// The reads of Open and Stat and the touch of Touch, prepared once
	// (database/sql prepares each on a connection the first time that
	// connection runs it): a Source that declares sha-256 digests has
	// every change of a baseline touch its blob first.
	findStmt, touchStmt *sql.Stmt

	// The active pack, written by the round running (the grouper runs
	// one at a time); active is its id for compaction, which leaves it
	// alone.
	f      *os.File
	id     int64
	size   int64
	active atomic.Int64
	nextID int64
	// filesFrom is the smallest blob the store may hold as a file of its
	// own (filesFromFact): a commit of a blob at least that long touches
	// such a file rather than packing a second copy.
	filesFrom int64
	// wbuf is the records of the round running, kept for the next round
	// up to wbufKeep: a baseline's rounds are alike in size, and a new
	// buffer each round was a zeroed allocation of a kilobyte a blob.
	wbuf []byte
}

// wbufKeep bounds the buffer a round leaves for the next, so that one
// large round (compaction's moves) does not keep its size for good.
const wbufKeep = 1 << 20

// packBatch is what one commit adds to a round: a new blob, or a chunk
// of the records compaction moves.
type packBatch struct{ recs []packRecord }

// ownRound is the mark a packed record waits with: no round but its own
// concerns it, since its bytes are written and synced by that round.
const ownRound = math.MaxUint64

// packRecord is a blob waiting for a round.
type packRecord struct {
	key   string // hex sha-256
	data  []byte
	mtime int64
	// from, for a record compaction moves, is where the row pointed;
	// the row is moved only if it still points there.
	from *packLoc
}

// packLoc is where a record lives, and what the index says of it.
type packLoc struct {
	pack, off, size, mtime int64
}

// indexPageSize is the page size of a new pack index. Its keys are
// sha-256 digests, so the rows a round inserts land at random pages, and
// the WAL gets a whole page for each. Rows are 60 bytes or so, and a
// 1 KiB page holds a dozen: a 100,000-resource baseline (viaduct serve
// against bench/staticsrc) wrote 1.67-1.73 GB in all, against 2.07 GB
// with SQLite's default of 4 KiB and its checkpoint every 1,000 pages.
const indexPageSize = 1024

// indexCheckpointPages is the pack index's wal_autocheckpoint: a page
// dirtied by many rounds is copied back into the database once per
// checkpoint, so a longer interval copies each less often (4 MiB of WAL
// at indexPageSize).
const indexCheckpointPages = 4096

// indexIdleConns is how many connections to the pack index stay open
// between statements. The fetch workers' touches and commits, Open's and
// Stat's lookups each take one for a statement; with database/sql's
// default of two, the rest were closed after each statement and opened
// again (running the pragmas and preparing the statements anew) for the
// next: a fifth of a baseline's CPU where the Source declares sha-256
// digests (BenchmarkBaselineIngest/dir).
const indexIdleConns = 16

// openPacks opens the pack index of the store at root, making it when it
// is missing; packBelow is the size up to which this process packs
// blobs (0: it gives every blob a file of its own, and only reads the
// packs).
func openPacks(root string, gap time.Duration, packBelow int64) (*packs, error) {
	d := filepath.Join(root, "packs")
	if err := os.MkdirAll(d, 0o755); err != nil {
		return nil, err
	}
	index := filepath.Join(d, "index.db")
	if err := makeIndex(index); err != nil {
		return nil, fmt.Errorf("pack index %s: %w", d, err)
	}
	db := openIndex(index,
		fmt.Sprintf("PRAGMA wal_autocheckpoint = %d", indexCheckpointPages),
		"PRAGMA temp_store = MEMORY")
	db.SetMaxIdleConns(indexIdleConns)
	if _, err := db.Exec(packSchema); err != nil {
		db.Close()
		return nil, fmt.Errorf("pack index %s: %w", d, err)
	}
	p := &packs{dir: d, db: db}
	var err error
	if p.filesFrom, err = p.noteFilesFrom(root, packBelow); err != nil {
		db.Close()
		return nil, fmt.Errorf("pack index %s: %w", d, err)
	}
	if p.findStmt, err = db.Prepare(`SELECT pack, off, len, mtime FROM blobs WHERE key = ?`); err == nil {
		p.touchStmt, err = db.Prepare(touchSQL + `= ? RETURNING pack, off, len, mtime`)
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("pack index %s: %w", d, err)
	}
	p.group = newGrouper(p.run, gap)
	// Every start begins a new pack: the active one of the process
	// before may end in a record it wrote but never indexed.
	ids, err := p.files()
	if err != nil {
		db.Close()
		return nil, err
	}
	p.nextID = 1
	if len(ids) > 0 {
		p.nextID = slices.Max(ids) + 1
	}
	p.active.Store(-1)
	return p, nil
}

// openIndex opens the pack index at path with pragmas run on every
// connection after the index's own. synchronous=FULL: a commit returns
// once its rows are durable. The page size is set before WAL mode writes
// a new file's first page. temp_store=MEMORY keeps a round's savepoint
// journal in memory: it holds a page for each the round changes (a round
// is bounded, by SyncInterval for commits and by compactChunk for
// compaction's moves), and past 64 KiB SQLite wrote it to a temporary
// file, one write a page: a write a blob in a baseline.
func openIndex(path string, pragmas ...string) *sql.DB {
	u := url.URL{Scheme: "file", Path: path}
	return sqliteconn.Open(u.String()+"?_synchronous=FULL&_busy_timeout=10000&_txlock=immediate",
		append([]string{fmt.Sprintf("PRAGMA page_size = %d", indexPageSize), "PRAGMA journal_mode = WAL"}, pragmas...)...)
}

// makeIndex makes the pack index at path when it is missing: in WAL mode,
// with its page size and its tables, under a name of its own first, then
// linked into place. Processes opening a new store at once (nodes of one
// machine sharing a directory, a node and an offline command) would
// otherwise each turn the new file to WAL mode, and SQLite refuses all
// but one of them at once, without waiting ("database is locked"). Every
// process links a finished index, the first link wins, and the others
// open it; a file in WAL mode stays so, and opening it takes no lock that
// SQLite does not wait for. A process killed while making it leaves its
// index.db.new-* behind, a few kilobytes no one reads: another process
// may be making one of that name pattern at that moment, so none is
// removed but by its maker.
func makeIndex(path string) error {
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".new-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	f.Close()
	defer os.Remove(tmp)
	db := openIndex(tmp)
	_, err = db.Exec(packSchema)
	// The last connection to close checkpoints the WAL into the file
	// (synchronous=FULL syncs it) and removes the WAL.
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// noteFilesFrom reads filesFromFact, lowered to what this process may
// write as files, and records it. Where the index does not hold it yet,
// it is one more than packBelow for a new store, and 0 for one whose
// index holds blobs (made by a version that did not keep the fact) or
// whose root holds a fan-out directory (blobs with files of their own). A
// process with packing off makes it 0, one with a smaller
// PackBelow than before lowers it. A version that did not keep the fact,
// run on a store this one made with a smaller PackBelow or with packing
// off, leaves it too high, as does such a process opened beside this
// one for as long as both run: a blob it wrote as a file and that is
// committed again later is packed too, a second copy of the same bytes
// (Open reads the packed one, Delete removes both).
//
// It reads and writes in one immediate transaction, so that processes
// opening the store at once each lower what the other recorded.
func (p *packs) noteFilesFrom(root string, packBelow int64) (int64, error) {
	tx, err := p.db.Begin()
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	v := int64(0)
	err = tx.QueryRow(`SELECT value FROM facts WHERE name = ?`, filesFromFact).Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		var held bool
		if err := tx.QueryRow(`SELECT EXISTS (SELECT 1 FROM blobs)`).Scan(&held); err != nil {
			return 0, err
		}
		fanned, err := hasFanOut(root)
		if err != nil {
			return 0, err
		}
		v = packBelow + 1
		if held || fanned {
			v = 0
		}
	case err != nil:
		return 0, err
	}
	mine := packBelow + 1
	if packBelow <= 0 {
		mine = 0
	}
	v = min(v, mine)
	_, err = tx.Exec(`INSERT INTO facts (name, value) VALUES (?, ?)
		ON CONFLICT (name) DO UPDATE SET value = excluded.value WHERE value != excluded.value`, filesFromFact, v)
	if err != nil {
		return 0, err
	}
	return v, tx.Commit()
}

// hasFanOut reports whether root holds a fan-out directory: blobs with
// files of their own.
func hasFanOut(root string) (bool, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		if e.IsDir() && isHexPair(e.Name()) {
			return true, nil
		}
	}
	return false, nil
}

// close closes the index, and the active pack unless a round is running
// (which then fails, on the closed index).
func (p *packs) close() error {
	p.group.mu.Lock()
	if !p.group.busy {
		p.retire()
	}
	p.group.mu.Unlock()
	p.findStmt.Close()
	p.touchStmt.Close()
	return p.db.Close()
}

func (p *packs) path(id int64) string {
	return filepath.Join(p.dir, fmt.Sprintf("%010d.pack", id))
}

// files lists the ids of the pack files.
func (p *packs) files() ([]int64, error) {
	ents, err := os.ReadDir(p.dir)
	if err != nil {
		return nil, err
	}
	var ids []int64
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".pack")
		if id, err := strconv.ParseInt(name, 10, 64); ok && err == nil && id > 0 {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// find returns where the index says the blob is; ok is false when it is
// not packed.
func (p *packs) find(ctx context.Context, key string) (loc packLoc, ok bool, err error) {
	k, err := hex.DecodeString(key)
	if err != nil {
		return loc, false, err
	}
	err = p.findStmt.QueryRowContext(ctx, k).Scan(&loc.pack, &loc.off, &loc.size, &loc.mtime)
	if errors.Is(err, sql.ErrNoRows) {
		return loc, false, nil
	}
	return loc, err == nil, err
}

// touchSQL advances the time of packed blobs (its one parameter) by key,
// the condition on key to follow: Touch's is one key, a round's a list.
// A time never goes back, so a touch that loses a race to a later one
// keeps the later.
const touchSQL = `UPDATE blobs SET mtime = max(mtime, ?) WHERE key `

// touch sets the packed blob's time to now; ok is false when it is not
// packed. It reads the row first and updates only one that is there: an
// update takes the index's one write lock even when it finds no row, and
// waits out a round holding it through the pack's sync, while a read
// does neither. A baseline of a Source that declares sha-256 digests
// touches every blob before fetching it, and almost every one is
// missing. A row deleted between the read and the update is reported
// missing, as a touch after the deletion would be.
func (p *packs) touch(ctx context.Context, key string, now time.Time) (loc packLoc, ok bool, err error) {
	if loc, ok, err = p.find(ctx, key); !ok || err != nil {
		return loc, ok, err
	}
	k, _ := hex.DecodeString(key) // find decoded it
	err = p.touchStmt.QueryRowContext(ctx, now.UnixNano(), k).Scan(&loc.pack, &loc.off, &loc.size, &loc.mtime)
	if errors.Is(err, sql.ErrNoRows) {
		return loc, false, nil
	}
	return loc, err == nil, err
}

// remove deletes the blob's row if it was last committed or touched
// before since (any time, when since is zero); the record's bytes stay
// until compaction. ok says whether a row was deleted.
func (p *packs) remove(ctx context.Context, key string, since time.Time) (ok bool, err error) {
	k, err := hex.DecodeString(key)
	if err != nil {
		return false, err
	}
	before := int64(1<<63 - 1)
	if !since.IsZero() {
		before = since.UnixNano()
	}
	res, err := p.db.ExecContext(ctx, `DELETE FROM blobs WHERE key = ? AND mtime < ?`, k, before)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// commit stores a blob, or touches it if the index holds it already: it
// returns once the blob is durable and indexed.
func (p *packs) commit(key string, data []byte, now time.Time) error {
	return p.put(packRecord{key: key, data: data, mtime: now.UnixNano()})
}

// put writes and indexes the records in the next round.
func (p *packs) put(recs ...packRecord) error {
	return p.group.wait(ownRound, &packBatch{recs: recs})
}

// run is one round: every batch gathered, in one write.
func (p *packs) run(batches []*packBatch) error {
	var recs []packRecord
	for _, b := range batches {
		recs = append(recs, b.recs...)
	}
	return p.write(recs)
}

// write appends the records to the active pack, syncs it, and indexes
// them, all in one transaction of the index, which holds the index's
// write lock from its start (an immediate transaction) to its commit,
// so that no other writer indexes a blob meanwhile. A blob the index
// holds already is touched, and no second copy of it is written. A
// round rarely holds one (a baseline's blobs are new), so the round is
// first laid out and indexed as if every blob were new, one statement
// per indexChunk rows; only when an insert finds a row there does it go
// back to the savepoint and take the long way: the held blobs touched
// (held), the rest laid out again and indexed. Looking every key up
// before inserting it was a fifth of a pack round's CPU. A failed write
// or sync retires the pack: what it ends in is not known any more, and
// the next round begins another.
func (p *packs) write(recs []packRecord) error {
	tx, err := p.db.Begin()
	if err != nil {
		return fmt.Errorf("pack index: %w", err)
	}
	defer tx.Rollback()
	if recs = onceEach(recs); len(recs) == 0 {
		return tx.Commit()
	}
	if _, err := tx.Exec(`SAVEPOINT round`); err != nil {
		return fmt.Errorf("pack index: %w", err)
	}
	buf, locs, err := p.layout(recs)
	if err != nil {
		return err
	}
	all, err := p.index(tx, recs, locs)
	if err != nil {
		return fmt.Errorf("indexing pack %s: %w", p.f.Name(), err)
	}
	if !all {
		if _, err := tx.Exec(`ROLLBACK TO round`); err != nil {
			return fmt.Errorf("pack index: %w", err)
		}
		if recs, err = p.held(tx, recs); err != nil {
			return fmt.Errorf("pack index: %w", err)
		}
		if len(recs) == 0 {
			return tx.Commit()
		}
		if buf, locs, err = p.layout(recs); err != nil {
			return err
		}
		if _, err := p.index(tx, recs, locs); err != nil {
			return fmt.Errorf("indexing pack %s: %w", p.f.Name(), err)
		}
	}
	if cap(buf) <= wbufKeep {
		defer func() { p.wbuf = buf[:0] }()
	}
	if _, err := p.f.Write(buf); err != nil {
		name := p.f.Name()
		p.retire()
		return fmt.Errorf("writing pack %s: %w", name, err)
	}
	p.size += int64(len(buf))
	if err := unix.Fdatasync(int(p.f.Fd())); err != nil {
		name := p.f.Name()
		p.retire()
		return fmt.Errorf("syncing pack %s: %w", name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("indexing pack %s: %w", p.f.Name(), err)
	}
	return nil
}

// layout makes the active pack ready for recs (the next pack begun when
// they would take this one past packFileMax) and returns their records
// as they are to be appended, in the buffer the last round left, and
// where each will begin in the pack.
func (p *packs) layout(recs []packRecord) (buf []byte, locs []int64, err error) {
	n := 0
	for _, rec := range recs {
		n += packHeaderLen + len(rec.data)
	}
	if p.f != nil && p.size > 0 && p.size+int64(n) > packFileMax {
		p.retire()
	}
	if p.f == nil {
		if err := p.begin(); err != nil {
			return nil, nil, err
		}
	}
	buf = p.wbuf[:0]
	if cap(buf) < n {
		buf = make([]byte, 0, n)
	}
	locs = make([]int64, len(recs))
	for i, rec := range recs {
		locs[i] = p.size + int64(len(buf))
		k, _ := hex.DecodeString(rec.key)
		buf = append(buf, packMagic[:]...)
		buf = append(buf, k...)
		buf = binary.BigEndian.AppendUint32(buf, uint32(len(rec.data)))
		buf = append(buf, rec.data...)
	}
	return buf, locs, nil
}

// onceEach keeps the first record of each new blob of a round, and every
// record compaction moves.
func onceEach(recs []packRecord) []packRecord {
	out := recs[:0:0]
	seen := make(map[string]bool, len(recs))
	for _, rec := range recs {
		if rec.from == nil {
			if seen[rec.key] {
				continue
			}
			seen[rec.key] = true
		}
		out = append(out, rec)
	}
	return out
}

// held touches the new blobs the index already holds (committed again:
// the same bytes at another URI, or fetched again) and returns the
// records left to write: the new blobs, and compaction's moves. The
// touch is one statement per heldChunk keys, at the round's latest time.
// recs holds each new blob once (onceEach).
func (p *packs) held(tx *sql.Tx, recs []packRecord) ([]packRecord, error) {
	var keys []any
	var mtime int64
	for _, rec := range recs {
		if rec.from == nil {
			k, _ := hex.DecodeString(rec.key)
			keys = append(keys, k)
			mtime = max(mtime, rec.mtime)
		}
	}
	held := map[string]bool{}
	for len(keys) > 0 {
		chunk := keys[:min(len(keys), heldChunk)]
		keys = keys[len(chunk):]
		q := touchSQL + `IN (?` + strings.Repeat(`, ?`, len(chunk)-1) + `) RETURNING key`
		rows, err := tx.Query(q, append([]any{mtime}, chunk...)...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var k []byte
			if err := rows.Scan(&k); err != nil {
				rows.Close()
				return nil, err
			}
			held[hex.EncodeToString(k)] = true
		}
		if err := rows.Close(); err != nil {
			return nil, err
		}
	}
	out := recs[:0:0]
	for _, rec := range recs {
		if rec.from == nil && held[rec.key] {
			continue
		}
		out = append(out, rec)
	}
	return out, nil
}

// heldChunk bounds the keys of one statement of held, and indexChunk the
// rows of one INSERT of index: far below SQLite's limit of parameters.
const (
	heldChunk  = 256
	indexChunk = 128
)

// index inserts the rows of new records written at locs to the active
// pack, indexChunk rows to a statement, and moves those of records
// compaction copied there, unless they were deleted or moved meanwhile.
// A new record whose key the index holds already is left out (OR
// IGNORE), and index stops there with all false: the caller goes back to
// its savepoint and touches that blob instead (write).
func (p *packs) index(tx *sql.Tx, recs []packRecord, locs []int64) (all bool, err error) {
	var rows []any
	all = true
	insert := func() error {
		if len(rows) == 0 {
			return nil
		}
		q := `INSERT OR IGNORE INTO blobs (key, pack, off, len, mtime) VALUES (?, ?, ?, ?, ?)` + strings.Repeat(`, (?, ?, ?, ?, ?)`, len(rows)/5-1)
		res, err := tx.Exec(q, rows...)
		if err == nil {
			var n int64
			n, err = res.RowsAffected()
			all = n == int64(len(rows)/5)
		}
		rows = rows[:0]
		return err
	}
	var move *sql.Stmt
	defer func() {
		if move != nil {
			move.Close()
		}
	}()
	for i, rec := range recs {
		k, _ := hex.DecodeString(rec.key)
		if rec.from == nil {
			rows = append(rows, k, p.id, locs[i], len(rec.data), rec.mtime)
			if len(rows) == 5*indexChunk {
				if err := insert(); err != nil || !all {
					return false, err
				}
			}
			continue
		}
		if move == nil {
			var err error
			if move, err = tx.Prepare(`UPDATE blobs SET pack = ?, off = ? WHERE key = ? AND pack = ? AND off = ?`); err != nil {
				return false, err
			}
		}
		if _, err := move.Exec(p.id, locs[i], k, rec.from.pack, rec.from.off); err != nil {
			return false, err
		}
	}
	err = insert()
	return all, err
}

// begin creates the next pack and makes its name durable.
func (p *packs) begin() error {
	id := p.nextID
	// Active before its file exists: compaction never takes a pack file
	// while it is active.
	p.active.Store(id)
	f, err := os.OpenFile(p.path(id), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if err != nil {
		p.active.Store(-1)
		return fmt.Errorf("creating pack: %w", err)
	}
	p.nextID++
	if err := syncDir(p.dir); err != nil {
		f.Close()
		p.active.Store(-1)
		return fmt.Errorf("creating pack %s: %w", f.Name(), err)
	}
	p.f, p.id, p.size = f, id, 0
	return nil
}

func (p *packs) retire() {
	if p.f != nil {
		p.f.Close()
	}
	p.f, p.size = nil, 0
	p.active.Store(-1)
}

// open opens the pack file holding loc; a pack compaction removed
// meanwhile fails with fs.ErrNotExist.
func (p *packs) open(loc packLoc) (*os.File, error) {
	return os.Open(p.path(loc.pack))
}

var errPackRecord = errors.New("pack record does not hold the blob its index names")

// checkHeader verifies that the record at loc's header names key.
func checkHeader(hdr []byte, key string, size int64) error {
	if len(hdr) != packHeaderLen || [4]byte(hdr[:4]) != packMagic ||
		hex.EncodeToString(hdr[4:36]) != key || int64(binary.BigEndian.Uint32(hdr[36:])) != size {
		return errPackRecord
	}
	return nil
}

// packsExist reports whether the store at root has a pack index: its
// packed blobs stay readable when packing is turned off.
func packsExist(root string) bool {
	_, err := os.Stat(filepath.Join(root, "packs", "index.db"))
	return err == nil
}
