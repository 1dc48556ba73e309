package harvester

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/resourcesync/dump"
	"github.com/viaduct-mirror/viaduct/storage"
	"github.com/viaduct-mirror/viaduct/upstream"
)

// dumpPackage is one Dump package downloaded to the spool directory and
// opened: its ZIP directory and manifest have passed dump.Open's checks.
type dumpPackage struct {
	uri  string
	path string
	*dump.Package
}

// close closes the package and removes its file from the spool.
func (d *dumpPackage) close() {
	d.Package.Close()
	os.Remove(d.path)
}

// openPackage GETs the package at uri under the Source's Policy, spools it
// to disk under max_package_bytes and opens it as a manifest of kind want.
// Errors name the Source and the package; a refusal wraps a *dump.Error,
// which names the entry.
func (p *pass) openPackage(ctx context.Context, uri string, want resourcesync.Kind) (*dumpPackage, error) {
	resp, err := p.client.Get(ctx, upstream.Request{
		URI:      uri,
		Source:   p.src.Name,
		Accept:   "application/zip",
		MaxBytes: p.h.cfg.MaxPackageBytes,
	})
	if err != nil {
		p.h.m.errors.WithLabelValues(p.src.Name, kindFetch).Inc()
		return nil, fmt.Errorf("source %s: GET dump package %s: %w", p.src.Name, uri, err)
	}
	defer resp.Body.Close()
	dir := p.h.deps.SpoolDir
	if dir == "" {
		dir = os.TempDir()
	} else if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("source %s: dump package %s: make spool directory: %w", p.src.Name, uri, err)
	}
	path, err := dump.Spool(ctx, resp.Body, dir, p.h.cfg.MaxPackageBytes)
	if err != nil {
		p.h.m.errors.WithLabelValues(p.src.Name, kindDump).Inc()
		return nil, fmt.Errorf("source %s: download dump package %s: %w", p.src.Name, uri, err)
	}
	lim := dump.DefaultLimits()
	lim.MaxPackageBytes = p.h.cfg.MaxPackageBytes
	lim.Manifest.MaxEntries = p.h.cfg.MaxEntries
	pkg, err := dump.Open(path, dump.Options{Name: uri, Want: want, Limits: lim})
	if err != nil {
		os.Remove(path)
		p.h.m.errors.WithLabelValues(p.src.Name, kindDump).Inc()
		return nil, fmt.Errorf("source %s: %w", p.src.Name, err)
	}
	if n, names := pkg.Unlisted(); n > 0 {
		p.tolerate(uri, tolUnlistedFile, n)
		p.log.Debug("dump package holds files its manifest does not list, ignored", "uri", uri, "files", n, "examples", names)
	}
	return &dumpPackage{uri: uri, path: path, Package: pkg}, nil
}

// check reads the whole package, verifying every bitstream against the
// manifest, and hands fn each manifest entry in order, without its bytes.
// Nothing fn decides takes effect before check returns nil, so a package
// refused anywhere leaves no trace: that is how no part of a package is
// ever catalogued alone.
func (p *pass) check(ctx context.Context, d *dumpPackage, fn func(i int, e *resourcesync.Entry) error) error {
	i := 0
	err := d.Entries(ctx, func(e *resourcesync.Entry, _ *dump.Body) error {
		defer func() { i++ }()
		return fn(i, e)
	})
	if err != nil {
		return p.refused(err)
	}
	return nil
}

// store reads the package again and commits the bitstream of every entry
// whose change in take is set (by manifest position), marking the change
// with its blob. Bytes reach the store only through dump.Body, whose end
// is reported only for a verified bitstream. The bytes are written in
// manifest order while the commits, which wait for the store to make
// them durable, run several at a time (see storeCommits); store returns
// once every commit it started has ended.
func (p *pass) store(ctx context.Context, d *dumpPackage, take []*viaduct.Change) error {
	i := 0
	buf := make([]byte, 64<<10)
	cm := newCommitter(ctx)
	err := d.Entries(ctx, func(e *resourcesync.Entry, body *dump.Body) error {
		c := take[i]
		i++
		if c == nil || body == nil {
			return nil
		}
		w, blob, err := p.writeBody(ctx, d.uri, e, body, buf)
		if err != nil {
			return err
		}
		loc := e.Loc
		return cm.run(func(ctx context.Context) error {
			defer w.Abort()
			key, err := w.Commit(ctx)
			if err != nil {
				// Counted once, in store: the commits in flight
				// when one fails are cancelled and fail too.
				return fmt.Errorf("source %s: dump package %s: entry %s: commit blob: %w", p.src.Name, d.uri, loc, err)
			}
			blob.SHA256 = key
			c.Blob = blob
			return nil
		}, func() { w.Abort() })
	})
	cerr := cm.wait()
	if err != nil && err != cerr {
		return p.refused(err)
	}
	if cerr != nil {
		p.h.m.errors.WithLabelValues(p.src.Name, kindStore).Inc()
	}
	return cerr
}

// writeBody copies one verified bitstream into a new blob, not yet
// committed, and returns it with what the store computed. On error the
// blob has been aborted.
func (p *pass) writeBody(ctx context.Context, pkg string, e *resourcesync.Entry, body *dump.Body, buf []byte) (storage.BlobWriter, *viaduct.StoredBlob, error) {
	var want storage.Expect
	if e.MD.Length != nil {
		want.Size = *e.MD.Length
	}
	w, err := p.h.deps.Blobs.Create(ctx, want)
	if err != nil {
		return nil, nil, p.storeErr(pkg, e.Loc, "start blob", err)
	}
	ok := false
	defer func() {
		if !ok {
			w.Abort()
		}
	}()
	if _, err := io.CopyBuffer(writerOnly{w}, body, buf); err != nil {
		var derr *dump.Error
		if errors.As(err, &derr) {
			return nil, nil, err
		}
		return nil, nil, p.storeErr(pkg, e.Loc, "write blob", err)
	}
	sums, err := body.Verify()
	if err != nil {
		return nil, nil, err
	}
	n, hs := w.Sum()
	if n != body.Len() || hs.Verify(sums) != nil {
		return nil, nil, p.storeErr(pkg, e.Loc, "write blob", fmt.Errorf("the store computed %d bytes %s, the package gave %d bytes %s", n, hs, body.Len(), sums))
	}
	ok = true
	return w, &viaduct.StoredBlob{MD5: hs.Get(resourcesync.MD5), Length: n}, nil
}

func (p *pass) storeErr(pkg, loc string, doing string, err error) error {
	p.h.m.errors.WithLabelValues(p.src.Name, kindStore).Inc()
	return fmt.Errorf("source %s: dump package %s: entry %s: %s: %w", p.src.Name, pkg, loc, doing, err)
}

// refused names the Source in a package's refusal and counts it; other
// errors already name it.
func (p *pass) refused(err error) error {
	var derr *dump.Error
	if errors.As(err, &derr) {
		p.h.m.errors.WithLabelValues(p.src.Name, kindDump).Inc()
		return fmt.Errorf("source %s: %w", p.src.Name, err)
	}
	return err
}

// kindStore counts failures of the blob store while storing a package's
// bitstreams.
const kindStore = "store"

// writerOnly hides a writer's ReadFrom so the buffer given is used.
type writerOnly struct{ io.Writer }
