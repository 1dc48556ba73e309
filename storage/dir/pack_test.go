package dir

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/storage"
	"github.com/viaduct-mirror/viaduct/storage/storagetest"
)

func openPacked(t *testing.T, root string) *Store {
	t.Helper()
	return openPackedBelow(t, root, 1024)
}

// openPackedBelow opens the store at root packing blobs up to below
// bytes (0: packing off), closed when the test ends.
func openPackedBelow(t *testing.T, root string, below int64) *Store {
	t.Helper()
	s, err := New(root, PackBelow(below))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func packFiles(t *testing.T, root string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(root, "packs", "*.pack"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func read(t *testing.T, s storage.Blobs, key string) string {
	t.Helper()
	return string(storagetest.Get(t, s, key))
}

// TestPackOrFile: a blob up to PackBelow bytes goes to a pack, a larger
// one to a file of its own, whether or not its size was known at Create.
func TestPackOrFile(t *testing.T) {
	root := t.TempDir()
	s := openPacked(t, root)
	small := storagetest.Put(t, s, []byte(strings.Repeat("s", 1024)))
	large := storagetest.Put(t, s, []byte(strings.Repeat("l", 1025)))
	if _, err := os.Stat(s.path(small)); err == nil {
		t.Errorf("blob of 1024 bytes has a file of its own")
	}
	if _, err := os.Stat(s.path(large)); err != nil {
		t.Errorf("blob of 1025 bytes: %v; want a file of its own", err)
	}
	if got := packFiles(t, root); len(got) != 1 {
		t.Errorf("packs %v, want one", got)
	}
	if got := read(t, s, small); got != strings.Repeat("s", 1024) {
		t.Errorf("small blob reads %d bytes", len(got))
	}
	// The index of a new store is in small pages (indexPageSize).
	var page int
	if err := s.packs.db.QueryRow(`PRAGMA page_size`).Scan(&page); err != nil || page != indexPageSize {
		t.Errorf("pack index page size %d, %v; want %d", page, err, indexPageSize)
	}
}

// TestPacksAcrossRestart: packed blobs are read back by the next process,
// which writes to a pack of its own, and a store opened with packing off
// still reads them.
func TestPacksAcrossRestart(t *testing.T) {
	root := t.TempDir()
	s := openPacked(t, root)
	a := storagetest.Put(t, s, []byte("first process"))
	s.Close()
	s = openPacked(t, root)
	if got := read(t, s, a); got != "first process" {
		t.Errorf("after a restart: %q", got)
	}
	storagetest.Put(t, s, []byte("second process"))
	if got := packFiles(t, root); len(got) != 2 {
		t.Errorf("packs %v, want one per process", got)
	}
	s.Close()
	off, err := New(root, PackBelow(0))
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close()
	if got := read(t, off, a); got != "first process" {
		t.Errorf("with packing off: %q", got)
	}
}

// TestCompactReclaimsDeletedBlobs: once half of a pack is deleted,
// compaction copies the rest to the active pack and removes it; every
// blob left reads as before, the deleted ones are gone.
func TestCompactReclaimsDeletedBlobs(t *testing.T) {
	root := t.TempDir()
	s := openPacked(t, root)
	var keys []string
	want := map[string]string{}
	for i := range 300 {
		data := fmt.Sprintf("blob %d %s", i, strings.Repeat("x", i))
		k := storagetest.Put(t, s, []byte(data))
		keys, want[k] = append(keys, k), data
	}
	s.Close()
	s = openPacked(t, root) // the first pack is no longer active
	old := packFiles(t, root)[0]
	fi, err := os.Stat(old)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if freed, err := s.Compact(ctx); err != nil || freed != 0 {
		t.Fatalf("Compact with nothing deleted = %d, %v; want 0", freed, err)
	}
	later := time.Now().Add(time.Hour)
	for i, k := range keys {
		if i%3 == 0 {
			continue
		}
		if gone, err := s.DeleteIdle(ctx, k, later); err != nil || !gone {
			t.Fatalf("DeleteIdle(%s) = %v, %v", k, gone, err)
		}
		delete(want, k)
	}
	freed, err := s.Compact(ctx)
	if err != nil || freed != fi.Size() {
		t.Fatalf("Compact = %d, %v; want the old pack's %d bytes", freed, err, fi.Size())
	}
	if _, err := os.Stat(old); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("compacted pack still there: %v", err)
	}
	listed := 0
	if err := s.List(ctx, func(storage.Info) error { listed++; return nil }); err != nil {
		t.Fatal(err)
	}
	if listed != len(want) {
		t.Errorf("List gave %d blobs, want %d", listed, len(want))
	}
	for _, k := range keys {
		data, kept := want[k]
		if !kept {
			if _, err := s.Stat(ctx, k); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("deleted blob %s: Stat = %v", k, err)
			}
			continue
		}
		if got := read(t, s, k); got != data {
			t.Errorf("blob %s after compaction: %q, want %q", k, got, data)
		}
	}
}

// TestCompactKeepsADamagedPack: a record whose bytes no longer match its
// key stops the compaction of its pack, which stays, and the error names
// the pack and the blob.
func TestCompactKeepsADamagedPack(t *testing.T) {
	root := t.TempDir()
	s := openPacked(t, root)
	keep := storagetest.Put(t, s, []byte("kept, then damaged"))
	drop := []string{storagetest.Put(t, s, []byte("dropped one")), storagetest.Put(t, s, []byte("dropped two"))}
	s.Close()
	pack := packFiles(t, root)[0]
	f, err := os.OpenFile(pack, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("D"), packHeaderLen); err != nil { // the first record's first byte
		t.Fatal(err)
	}
	f.Close()
	s = openPacked(t, root)
	ctx := context.Background()
	for _, k := range drop {
		if _, err := s.DeleteIdle(ctx, k, time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	_, err = s.Compact(ctx)
	if err == nil || !strings.Contains(err.Error(), pack) || !strings.Contains(err.Error(), keep) {
		t.Fatalf("Compact = %v; want an error naming %s and %s", err, pack, keep)
	}
	if _, err := os.Stat(pack); err != nil {
		t.Errorf("damaged pack removed: %v", err)
	}
}

// TestUnindexedRecordIsInvisible: a record written to a pack whose index
// row never came (a crash between the two) is not a blob; committing the
// same bytes again stores them.
func TestUnindexedRecordIsInvisible(t *testing.T) {
	root := t.TempDir()
	s := openPacked(t, root)
	data := []byte("written, never indexed")
	key := storagetest.Put(t, s, data)
	k, _, err := s.packs.find(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	// The crash: the record stays in the pack, its row goes.
	if _, err := s.packs.db.Exec(`DELETE FROM blobs`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openPacked(t, root)
	if _, err := s.Stat(context.Background(), key); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Stat of an unindexed record = %v, want not found", err)
	}
	storagetest.Put(t, s, data)
	if got := read(t, s, key); got != string(data) {
		t.Errorf("stored again: %q", got)
	}
	if l, _, _ := s.packs.find(context.Background(), key); l.pack == k.pack {
		t.Errorf("stored again into the pack of the lost record (%d)", l.pack)
	}
}

// TestFailedPackWriteRetiresThePack: a commit whose pack write fails
// fails, and the next commit goes to a new pack.
func TestFailedPackWriteRetiresThePack(t *testing.T) {
	root := t.TempDir()
	s := openPacked(t, root)
	first := storagetest.Put(t, s, []byte("before the failure"))
	s.packs.f.Close() // every write to it now fails
	if _, err := storagetest.PutErr(s, []byte("lost to the failure")); err == nil || !strings.Contains(err.Error(), "writing pack") {
		t.Fatalf("commit into a failing pack: %v, want its write error", err)
	}
	after := storagetest.Put(t, s, []byte("after the failure"))
	if got := packFiles(t, root); len(got) != 2 {
		t.Errorf("packs %v, want the failed one and a new one", got)
	}
	if read(t, s, first) != "before the failure" || read(t, s, after) != "after the failure" {
		t.Error("blobs committed around the failure do not read back")
	}
}

// TestCommittedAgainIsWrittenOnce: the same bytes committed again, one
// after the other or many at once, are one record; each commit touches
// the blob, so that a collection running meanwhile keeps it.
func TestCommittedAgainIsWrittenOnce(t *testing.T) {
	root := t.TempDir()
	s := openPacked(t, root)
	ctx := context.Background()
	data := []byte("the same bytes at several URIs")
	putMany := func() {
		errs := make(chan error, 8)
		for range 8 {
			go func() {
				_, err := storagetest.PutErr(s, data)
				errs <- err
			}()
		}
		for range 8 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
	}
	putMany()
	key := storagetest.Put(t, s, data)
	first, err := s.Stat(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	packs := packFiles(t, root)
	if len(packs) != 1 {
		t.Fatalf("packs %v, want one", packs)
	}
	fi, err := os.Stat(packs[0])
	if err != nil {
		t.Fatal(err)
	}
	if want := packHeaderLen + int64(len(data)); fi.Size() != want {
		t.Errorf("pack is %d bytes, want the %d of one record", fi.Size(), want)
	}
	putMany()
	again, err := s.Stat(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if !again.ModTime.After(first.ModTime) {
		t.Errorf("committed again at %v, blob's time still %v", again.ModTime, first.ModTime)
	}
}

// TestRoundOfManyBlobs: one pack round with more blobs than one statement
// of the index takes, some held already, some twice in the round, writes
// each new blob once, touches each held one, and indexes them all.
func TestRoundOfManyBlobs(t *testing.T) {
	root := t.TempDir()
	s := openPacked(t, root)
	body := func(i int) []byte { return []byte(fmt.Sprintf("blob %d of the round", i)) }
	const heldN, newN = heldChunk + 44, 2*indexChunk + 30
	var heldKeys []string
	for i := range heldN {
		heldKeys = append(heldKeys, storagetest.Put(t, s, body(i)))
	}
	fi, err := os.Stat(packFiles(t, root)[0])
	if err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour).UnixNano()
	var recs []packRecord
	var want int64
	for i := range heldN + newN {
		b := body(i)
		sum := sha256.Sum256(b)
		rec := packRecord{key: hex.EncodeToString(sum[:]), data: b, mtime: later}
		recs = append(recs, rec)
		if i >= heldN {
			want += int64(packHeaderLen + len(b))
			if i%3 == 0 {
				recs = append(recs, rec) // twice in the round
			}
		}
	}
	if err := s.packs.write(recs); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(packFiles(t, root)[0])
	if err != nil {
		t.Fatal(err)
	}
	if grew := after.Size() - fi.Size(); grew != want {
		t.Errorf("the round wrote %d bytes, want %d: the %d new blobs once each", grew, want, newN)
	}
	var rows int
	if err := s.packs.db.QueryRow(`SELECT count(*) FROM blobs`).Scan(&rows); err != nil || rows != heldN+newN {
		t.Errorf("index holds %d rows (%v), want %d", rows, err, heldN+newN)
	}
	for _, k := range heldKeys {
		info, err := s.Stat(context.Background(), k)
		if err != nil || info.ModTime.UnixNano() != later {
			t.Fatalf("held blob %s: %+v, %v; want touched to the round's time", k, info, err)
		}
	}
	for i := heldN; i < heldN+newN; i++ {
		sum := sha256.Sum256(body(i))
		if got := read(t, s, hex.EncodeToString(sum[:])); got != string(body(i)) {
			t.Fatalf("new blob %d reads %q", i, got)
		}
	}
}

// TestSmallFileStaysOne: a blob of packing size the store holds as a
// file of its own (written with packing off, or with a smaller
// PackBelow) is touched when committed again, and not packed a second
// time; a store made packing from its start does not look for files of
// blobs it has always packed, and a later process with packing off, or
// a smaller PackBelow, makes the next one look again.
func TestSmallFileStaysOne(t *testing.T) {
	ctx := context.Background()
	packed := func(s *Store, key string) bool {
		t.Helper()
		_, ok, err := s.packs.find(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	open := func(root string, below int64) *Store { return openPackedBelow(t, root, below) }
	// stays puts data as a file with packing at below, reopens the store
	// packing at above, and commits the same bytes again.
	stays := func(name string, below, above int64, data []byte) {
		t.Helper()
		root := t.TempDir()
		s := open(root, below)
		key := storagetest.Put(t, s, data)
		old := time.Now().Add(-time.Hour)
		if err := os.Chtimes(s.path(key), old, old); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		s.Close()
		s = open(root, above)
		if s.packs.filesFrom > int64(len(data)) {
			t.Errorf("%s: files looked for from %d bytes; the store holds a file of %d", name, s.packs.filesFrom, len(data))
		}
		storagetest.Put(t, s, data)
		if packed(s, key) {
			t.Errorf("%s: a blob held as a file was packed again", name)
		}
		if fi, err := os.Stat(s.path(key)); err != nil {
			t.Errorf("%s: the file of a blob committed again: %v", name, err)
		} else if !fi.ModTime().After(old) {
			t.Errorf("%s: the file of a blob committed again keeps its time %s; want it touched", name, fi.ModTime())
		}
	}
	stays("files first, then packing", 0, 1024, []byte("a small blob kept as a file"))
	stays("PackBelow raised", 16, 1024, []byte("longer than sixteen bytes, packed since"))

	// Packing from the start: no file looked for.
	fresh := t.TempDir()
	s := open(fresh, 1024)
	if s.packs.filesFrom != 1025 {
		t.Fatalf("a new store packing up to 1024 bytes looks for files from %d bytes; want 1025", s.packs.filesFrom)
	}
	k := storagetest.Put(t, s, []byte("packed from the start"))
	if !packed(s, k) || fileExists(s.path(k)) {
		t.Errorf("a new store's small blob: packed %v, file %v; want packed only", packed(s, k), fileExists(s.path(k)))
	}
	// So a file such a store did not expect (left by a version that
	// did not keep the fact, with packing off) is not looked for: the
	// blob is packed beside it, and reads the same.
	planted := []byte("written as a file by an older version")
	sum := sha256.Sum256(planted)
	pk := hex.EncodeToString(sum[:])
	if err := os.MkdirAll(filepath.Dir(s.path(pk)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.path(pk), planted, 0o644); err != nil {
		t.Fatal(err)
	}
	storagetest.Put(t, s, planted)
	if !packed(s, pk) || read(t, s, pk) != string(planted) {
		t.Errorf("a new store's small blob with an unexpected file: packed %v; want packed, reading the same", packed(s, pk))
	}
	s.Close()

	// A larger PackBelow later keeps the fact; a smaller one, or packing
	// off, lowers it for good.
	for _, step := range []struct {
		below, want int64
	}{{4096, 1025}, {100, 101}, {1024, 101}, {0, 0}, {1024, 0}} {
		s = open(fresh, step.below)
		if s.packs.filesFrom != step.want {
			t.Errorf("opened with PackBelow %d: files looked for from %d bytes; want %d", step.below, s.packs.filesFrom, step.want)
		}
		s.Close()
	}

	// An index made by a version that did not keep the fact, holding a
	// blob.
	other := t.TempDir()
	s = open(other, 1024)
	storagetest.Put(t, s, []byte("packed by an older version"))
	if _, err := s.packs.db.Exec(`DROP TABLE facts`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s = open(other, 1024); s.packs.filesFrom != 0 {
		t.Errorf("an index without the fact: files looked for from %d bytes; want 0", s.packs.filesFrom)
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestFilesFromAtOnce: processes opening a new store at once, with
// different PackBelow, all open it (each making its index, one linking
// it), and leave the least of what each may write as files recorded
// (each index connection here stands for a process). Without makeIndex,
// about one round in 400 had an open fail turning the new file to WAL
// mode.
func TestFilesFromAtOnce(t *testing.T) {
	belows := []int64{4096, 0, 1024, 100}
	for round := range 10 {
		// A new store: the opens at once also make its index.
		root := t.TempDir()
		errs := make(chan error, len(belows))
		for _, below := range belows {
			go func() {
				p, err := openPacks(root, 0, below)
				if err == nil {
					err = p.close()
				}
				errs <- err
			}()
		}
		for range belows {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		p, err := openPacks(root, 0, 65536)
		if err != nil {
			t.Fatal(err)
		}
		// What the losing opens made is gone: the new index under its
		// own name, and its WAL.
		ents, err := os.ReadDir(filepath.Join(root, "packs"))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if strings.Contains(e.Name(), ".new-") {
				t.Errorf("round %d: %s left in the packs directory", round, e.Name())
			}
		}
		if p.filesFrom != 0 {
			t.Errorf("round %d: after opens at %v at once, files looked for from %d bytes; want 0 (one had packing off)", round, belows, p.filesFrom)
		}
		p.close()
	}
}

// TestTouchOfAMissingBlobTakesNoLock: a touch of a blob the store does
// not hold answers "not found" while another process holds the index's
// write lock (as a round does through its pack's sync), rather than
// waiting for the lock and failing; one of a packed blob still advances
// its time once the lock is free.
func TestTouchOfAMissingBlobTakesNoLock(t *testing.T) {
	root := t.TempDir()
	s := openPacked(t, root)
	ctx := context.Background()
	held := storagetest.Put(t, s, []byte("a packed blob"))
	before, err := s.Stat(ctx, held)
	if err != nil {
		t.Fatal(err)
	}
	other := openIndex(filepath.Join(root, "packs", "index.db"))
	defer other.Close()
	tx, err := other.Begin() // _txlock=immediate: the write lock, now
	if err != nil {
		t.Fatal(err)
	}
	missing := hex.EncodeToString(make([]byte, 32))
	if _, err := s.Touch(ctx, missing); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Touch of a missing blob beside a held write lock = %v, want ErrNotFound", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	after, err := s.Touch(ctx, held)
	if err != nil {
		t.Fatal(err)
	}
	if !after.ModTime.After(before.ModTime) {
		t.Errorf("touched blob's time %v, not after %v", after.ModTime, before.ModTime)
	}
}

// TestIndexConnectionsStayOpen: the statements of many goroutines at
// once (the fetch workers' touches, Open's and Stat's lookups) reuse the
// index's connections rather than closing all but two after each
// statement and opening them again for the next.
func TestIndexConnectionsStayOpen(t *testing.T) {
	s := openPacked(t, t.TempDir())
	ctx := context.Background()
	held := storagetest.Put(t, s, []byte("a packed blob"))
	missing := hex.EncodeToString(make([]byte, 32))
	const goroutines = 8
	errs := make(chan error, goroutines)
	for range goroutines {
		go func() {
			for range 50 {
				if _, err := s.Touch(ctx, missing); !errors.Is(err, storage.ErrNotFound) {
					errs <- fmt.Errorf("Touch of a missing blob: %v", err)
					return
				}
				if _, err := s.Stat(ctx, held); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range goroutines {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	st := s.packs.db.Stats()
	if st.MaxIdleClosed != 0 {
		t.Errorf("%d index connections closed as surplus idle ones (%d open now): each is opened again for a later statement", st.MaxIdleClosed, st.OpenConnections)
	}
}
