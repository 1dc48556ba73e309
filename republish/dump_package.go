package republish

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/resourcesync/dump"
	"github.com/viaduct-mirror/viaduct/storage"
)

// packageWriter writes one dump package straight into the blob store,
// with its manifest copy beside it as a second blob: neither is ever held
// whole in memory or on local disk, and neither is visible under a key
// until the package is complete (commit).
type packageWriter struct {
	blobs storage.Blobs
	h     *resourcesync.Header
	zip   storage.BlobWriter
	man   storage.BlobWriter
	w     *dump.Writer
}

// newPackage starts a package whose manifest has header h; h may still
// change (completed, until) until finish.
func (d *Dumps) newPackage(ctx context.Context, h *resourcesync.Header) (*packageWriter, error) {
	p := &packageWriter{blobs: d.blobs, h: h}
	var err error
	if p.zip, err = d.blobs.Create(ctx, storage.Expect{}); err != nil {
		return nil, fmt.Errorf("starting a dump package: %w", err)
	}
	if p.man, err = d.blobs.Create(ctx, storage.Expect{}); err != nil {
		p.zip.Abort()
		return nil, fmt.Errorf("starting a dump manifest copy: %w", err)
	}
	p.w, err = dump.NewWriter(p.zip, h, dump.Config{
		MaxEntries: d.cfg.MaxEntries, MaxBytes: d.cfg.MaxBytes, TempDir: d.cfg.TempDir, ManifestCopy: p.man,
	})
	if err != nil {
		p.zip.Abort()
		p.man.Abort()
		return nil, err
	}
	return p, nil
}

// add puts rec's bitstream (none for a deletion) into the package under
// entry e, and reports full, with nothing written, when the package has
// no room for it.
func (p *packageWriter) add(ctx context.Context, e *resourcesync.Entry, rec *Record) (full bool, err error) {
	var body io.Reader
	if !rec.Deleted() {
		b, err := p.blobs.Open(ctx, rec.SHA256)
		if err != nil {
			return false, fmt.Errorf("resource %s: bitstream %s: %w", rec.URI, rec.SHA256, err)
		}
		defer b.Close()
		body = b
	}
	err = p.w.Add(ctx, e, body)
	if errors.Is(err, dump.ErrFull) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("resource %s: %w", rec.URI, err)
	}
	return false, nil
}

// finish writes the manifest, commits the package and its manifest copy,
// and describes them.
func (p *packageWriter) finish(ctx context.Context) (dumpPackage, error) {
	entries, bytes := p.w.Len()
	if err := p.w.Close(); err != nil {
		p.abort()
		return dumpPackage{}, fmt.Errorf("closing a dump package: %w", err)
	}
	n, hashes := p.zip.Sum()
	mn, _ := p.man.Sum()
	key, err := p.zip.Commit(ctx)
	if err != nil {
		p.abort()
		return dumpPackage{}, fmt.Errorf("storing a dump package: %w", err)
	}
	mkey, err := p.man.Commit(ctx)
	if err != nil {
		p.abort()
		return dumpPackage{}, fmt.Errorf("storing a dump manifest copy: %w", err)
	}
	md := p.h.MD
	return dumpPackage{
		Key: key, Length: n, MD5: hashes.Get(resourcesync.MD5), Manifest: mkey, ManifestLength: mn,
		Entries: entries, Bytes: bytes, At: md.At, Completed: md.Completed, From: md.From, Until: md.Until,
	}, nil
}

// abort drops whatever was written; it is safe after finish.
func (p *packageWriter) abort() {
	p.w.Close()
	p.zip.Abort()
	p.man.Abort()
}
