package dir

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/storage"
)

// writer is a blob being written, held in memory while it may still be
// packed and in a temporary file once it may not. It is used by one
// goroutine at a time.
type writer struct {
	s    *Store
	buf  []byte   // the bytes so far, while f is nil
	f    *os.File // nil while the bytes are in buf
	anon bool     // f has no name until it is linked under its key
	h    *resourcesync.Hasher
	mark uint64 // the store's sync rounds when writing began
	key  string // set once committed
	done bool   // committed or aborted
	// direct: f takes writes around the page cache (see Store.direct and
	// writeFile).
	direct bool
}

var _ storage.BlobWriter = (*writer)(nil)

func newWriter(s *Store, want storage.Expect) *writer {
	return &writer{s: s, h: resourcesync.NewHasherFor(want.Size, want.SHA1)}
}

// spill moves the writer's bytes to a temporary file: the blob is too
// large to be packed. direct asks for direct writes (see writeFile); only
// Create asks, for a blob expected to be DirectFrom bytes or more, before
// any byte is written.
func (w *writer) spill(direct bool) error {
	f, direct, err := w.s.createTemp(direct)
	if err != nil {
		return err
	}
	w.f, w.anon, w.direct, w.mark = f, w.s.anon, direct, w.s.group.mark()
	if len(w.buf) > 0 {
		if _, err := f.Write(w.buf); err != nil {
			return fmt.Errorf("writing temporary blob %s: %w", f.Name(), err)
		}
	}
	w.buf = nil
	return nil
}

var errClosed = errors.New("blob writer already committed or aborted")

func (w *writer) Write(p []byte) (int, error) {
	if w.done {
		return 0, errClosed
	}
	if w.f == nil && int64(len(w.buf)+len(p)) > w.s.packBelow {
		if err := w.spill(false); err != nil {
			return 0, err
		}
	}
	if w.f == nil {
		w.buf = append(w.buf, p...)
		_, err := w.h.Write(p)
		return len(p), err
	}
	n, err := w.writeFile(p)
	if _, herr := w.h.Write(p[:n]); herr != nil {
		return n, herr
	}
	if err != nil {
		return n, fmt.Errorf("writing temporary blob %s: %w", w.f.Name(), err)
	}
	return n, nil
}

// writeFile writes p to the temporary file. A direct write needs its
// bytes' address, its length and the file's offset aligned; the writes of
// a fetch worker are whole aligned buffers (see storage.AlignedBuffer)
// but the last. The first write that is not aligned, or that the file
// system refuses, turns direct writes off for the rest of the file: its
// bytes go through the page cache like any other file's.
func (w *writer) writeFile(p []byte) (int, error) {
	if w.direct && !storage.Aligned(p) {
		if err := w.endDirect(); err != nil {
			return 0, err
		}
	}
	n, err := w.f.Write(p)
	if err != nil && w.direct && refusedDirect(err) {
		if err = w.endDirect(); err == nil {
			var m int
			m, err = w.f.Write(p[n:])
			n += m
		}
	}
	return n, err
}

func (w *writer) endDirect() error {
	w.direct = false
	return endDirect(w.f)
}

func (w *writer) Sum() (int64, resourcesync.Hashes) { return w.h.Len(), w.h.Sum() }

// Commit syncs the temporary file, checks its length, and links it under its
// key. A link fails instead of replacing, so an existing blob is never
// rewritten; where the file system has no hard links, it falls back to a
// rename after checking that the blob is not there yet.
func (w *writer) Commit(ctx context.Context) (string, error) {
	if w.key != "" {
		return w.key, nil
	}
	if w.done {
		return "", errClosed
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	key := w.h.Sum().Get(resourcesync.SHA256)
	commit := w.commit
	if w.f == nil {
		commit = w.commitPacked
	}
	if err := commit(key); err != nil {
		w.Abort()
		return "", fmt.Errorf("committing blob %s: %w", key, err)
	}
	w.key, w.done = key, true
	w.h.Close()
	return key, nil
}

// commit makes the temporary file's bytes durable before the file gets
// its final name, so that a name always holds its bytes even after a
// crash, then links it and makes the link durable (see the package doc).
// An anonymous temporary stays open until it is linked, since its
// descriptor is the only way to it.
func (w *writer) commit(key string) error {
	tmp := w.f.Name()
	if !w.s.wholeFS {
		if err := w.f.Sync(); err != nil {
			return err
		}
	}
	fi, err := w.f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() != w.h.Len() {
		return fmt.Errorf("temporary file %s holds %d bytes, %d were written", tmp, fi.Size(), w.h.Len())
	}
	if !w.anon {
		if err := w.f.Close(); err != nil {
			return err
		}
	}
	if w.s.wholeFS {
		if err := w.s.group.wait(w.mark); err != nil {
			return err
		}
	}
	dest := w.s.path(key)
	dir := filepath.Dir(dest)
	err = w.s.link(key, w, dest)
	if errors.Is(err, fs.ErrExist) {
		// The same bytes are stored: touch them, so that a collection
		// that found them unreferenced leaves them (storage.Sweeper). If
		// the collection took them first, link this copy after all.
		now := time.Now()
		if err = os.Chtimes(dest, now, now); errors.Is(err, fs.ErrNotExist) {
			err = w.s.link(key, w, dest)
		}
	}
	switch {
	case err == nil, errors.Is(err, fs.ErrExist):
		// An existing blob may have been linked a moment ago by a commit
		// still waiting for its directory sync: it is synced here too,
		// so this Commit does not return before the blob is durable.
	case w.anon:
		return err
	default:
		if _, err := os.Stat(dest); err != nil {
			if err := os.Rename(tmp, dest); err != nil {
				return err
			}
		}
	}
	if w.anon {
		if err := w.f.Close(); err != nil {
			return err
		}
	}
	if err := w.s.syncEntry(w.mark, key, dir); err != nil {
		return err
	}
	if w.anon {
		return nil
	}
	// A crash before this remove leaves a temporary that the next start
	// cleans up; the blob itself is already durable. After a rename there
	// is nothing left to remove.
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Abort closes and removes the temporary file.
func (w *writer) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	w.h.Close()
	if w.f == nil {
		w.buf = nil
		return nil
	}
	w.f.Close()
	if w.anon {
		return nil // closing an anonymous file frees it
	}
	if err := os.Remove(w.f.Name()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing temporary blob: %w", err)
	}
	return nil
}

// commitPacked stores the bytes held in memory in a pack, unless the
// blob is stored already: packed (it is then touched), or in a file of
// its own (see filesFromFact).
func (w *writer) commitPacked(key string) error {
	now := time.Now()
	// A blob the store holds as a file (written before it packed, with
	// packing off or with a smaller PackBelow) stays one.
	if int64(len(w.buf)) >= w.s.packs.filesFrom {
		if err := os.Chtimes(w.s.path(key), now, now); err == nil {
			return nil
		}
	}
	err := w.s.packs.commit(key, w.buf, now)
	w.buf = nil
	return err
}
