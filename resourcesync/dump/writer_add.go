package dump

import (
	"archive/zip"
	"context"
	"fmt"
	"io"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// Add writes e's bitstream from body into the package and e into the
// manifest. e.MD.Length must be set (the caller knows what it stored): it
// decides, before anything is written, whether the bitstream fits
// (ErrFull if not), and the bytes read must match it. Add fills in e's
// path when empty (DerivePath, made unique) and sets its hash to the md5
// and sha-256 of the bytes, plus sha-1 when e declared one; hashes e
// already declares must match the bytes. A deletion (Change Dump only) has
// a nil body and no path.
//
// Any error but ErrFull leaves the package unusable: Close then only
// cleans up.
func (w *Writer) Add(ctx context.Context, e *resourcesync.Entry, body io.Reader) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return fmt.Errorf("dump writer: Add after Close")
	}
	if err := w.checkEntry(e, body); err != nil {
		return err // the entry is wrong, the package is not
	}
	if w.entries+1 > w.cfg.MaxEntries {
		return ErrFull
	}
	if body == nil {
		return w.writeEntry(e)
	}
	n := *e.MD.Length
	if w.bytes > 0 && w.bytes+n > w.cfg.MaxBytes {
		return ErrFull
	}
	if e.MD.Path == "" {
		e.MD.Path = uniquePath(DerivePath(w.cfg.Dir, e.Loc), w.paths)
	}
	name, why := zipName(e.MD.Path)
	if why != "" {
		return fmt.Errorf("dump writer: %s: path %q: %s", e.Loc, e.MD.Path, why)
	}
	if _, dup := w.paths[e.MD.Path]; dup || name == ManifestName {
		return fmt.Errorf("dump writer: %s: path %q already used", e.Loc, e.MD.Path)
	}
	w.paths[e.MD.Path] = struct{}{}
	if err := w.writeBody(ctx, e, name, body); err != nil {
		w.err = err
		return err
	}
	w.bytes += n
	return w.writeEntry(e)
}

// checkEntry refuses an entry that cannot go into this manifest.
func (w *Writer) checkEntry(e *resourcesync.Entry, body io.Reader) error {
	if e.Loc == "" {
		return fmt.Errorf("dump writer: entry without loc")
	}
	if e.MD == nil {
		e.MD = &resourcesync.MD{}
	}
	md := e.MD
	if w.change {
		switch md.Change {
		case resourcesync.Created, resourcesync.Updated, resourcesync.Deleted:
		default:
			return fmt.Errorf("dump writer: %s: change %q, want created, updated or deleted", e.Loc, md.Change)
		}
		t := e.ChangeTime()
		if t.IsZero() {
			return fmt.Errorf("dump writer: %s: change without a time", e.Loc)
		}
		if t.Before(w.last.LastMod) {
			return fmt.Errorf("dump writer: %s: change at %s after one at %s", e.Loc, resourcesync.FormatTime(t), resourcesync.FormatTime(w.last.LastMod))
		}
	} else if md.Change == resourcesync.Deleted {
		return fmt.Errorf("dump writer: %s: deletion in a Resource Dump", e.Loc)
	}
	deleted := md.Change == resourcesync.Deleted
	switch {
	case deleted && (body != nil || md.Path != ""):
		return fmt.Errorf("dump writer: %s: a deletion has no bitstream and no path", e.Loc)
	case !deleted && body == nil:
		return fmt.Errorf("dump writer: %s: no bitstream", e.Loc)
	case !deleted && (md.Length == nil || *md.Length < 0):
		return fmt.Errorf("dump writer: %s: no length", e.Loc)
	}
	return nil
}

// writeBody copies the bitstream into the ZIP, hashing it, and checks it
// against what e declares.
func (w *Writer) writeBody(ctx context.Context, e *resourcesync.Entry, name string, body io.Reader) error {
	fh := &zip.FileHeader{Name: name, Method: methodFor(e.MD.Type), Modified: e.ChangeTime()}
	fh.SetMode(0o644)
	zf, err := w.zw.CreateHeader(fh)
	if err != nil {
		return fmt.Errorf("dump writer: %s: %w", e.Loc, err)
	}
	want := *e.MD.Length
	h := resourcesync.NewHasher()
	n, err := io.Copy(io.MultiWriter(zf, h), io.LimitReader(ctxReader{ctx, body}, want+1))
	if err != nil {
		return fmt.Errorf("dump writer: %s: copying the bitstream: %w", e.Loc, err)
	}
	if n != want {
		return fmt.Errorf("dump writer: %s: bitstream has %s bytes, the entry says %d", e.Loc, atLeast(n, want), want)
	}
	sums := h.Sum()
	if len(e.MD.Hash) > 0 {
		if err := e.MD.Hash.Verify(sums); err != nil {
			return fmt.Errorf("dump writer: %s: bitstream differs from its entry: %w", e.Loc, err)
		}
	}
	out := resourcesync.Hashes{{Alg: resourcesync.MD5, Value: sums.Get(resourcesync.MD5)}}
	if e.MD.Hash.Get(resourcesync.SHA1) != "" {
		out = append(out, resourcesync.Hash{Alg: resourcesync.SHA1, Value: sums.Get(resourcesync.SHA1)})
	}
	e.MD.Hash = append(out, resourcesync.Hash{Alg: resourcesync.SHA256, Value: sums.Get(resourcesync.SHA256)})
	return nil
}

func atLeast(n, want int64) string {
	if n > want {
		return fmt.Sprintf("more than %d", want)
	}
	return fmt.Sprint(n)
}

// writeEntry adds e to the manifest.
func (w *Writer) writeEntry(e *resourcesync.Entry) error {
	if err := w.mw.Write(e); err != nil {
		w.err = fmt.Errorf("dump writer: manifest: %w", err)
		return w.err
	}
	w.entries++
	if t := e.ChangeTime(); w.change {
		w.last.LastMod = t
	}
	return nil
}
