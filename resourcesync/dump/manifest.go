package dump

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// walk reads manifest.xml from the package and calls fn for each entry
// with the ZIP entry its path names (nil for a deletion), after checking
// the entry against the manifest's rules and the package. When it has
// read the whole manifest it checks that every ZIP entry was listed. It
// runs in Open, with fn nil, and again in Entries.
func (p *Package) walk(ctx context.Context, fn func(e *resourcesync.Entry, f *zip.File) error) error {
	mf := p.files[ManifestName]
	if mf == nil || isDir(mf) {
		return refuse(p.name, ManifestName, ErrManifest, nil, "no manifest.xml at the root of the package")
	}
	body, err := p.body(ctx, mf, nil, "", p.lim.MaxManifestBytes)
	if err != nil {
		return err
	}
	rd, err := resourcesync.NewReader(body, p.lim.Manifest)
	if err != nil {
		return p.manifestErr(err, "reading manifest.xml")
	}
	h := rd.Header()
	kind := h.Kind()
	if kind != resourcesync.KindResourceDumpManifest && kind != resourcesync.KindChangeDumpManifest || p.want != "" && kind != p.want {
		want := p.want
		if want == "" {
			want = "a Resource or Change Dump Manifest"
		}
		return refuse(p.name, ManifestName, ErrManifest, nil, "manifest.xml is a %s, want %s", kind, want)
	}
	if kind == resourcesync.KindChangeDumpManifest && h.MD.From.IsZero() {
		return refuse(p.name, ManifestName, ErrManifest, nil, "Change Dump Manifest without from")
	}
	c := entryChecker{p: p, h: h, change: kind == resourcesync.KindChangeDumpManifest, listed: make(map[string]struct{}, len(p.files))}
	n := 0
	for {
		e, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return p.manifestErr(err, "reading manifest.xml")
		}
		n++
		f, err := c.check(e)
		if err != nil {
			return err
		}
		if fn != nil {
			if err := fn(e, f); err != nil {
				return err
			}
		}
	}
	// The manifest's own bytes are verified (size, CRC) at its end.
	if _, err := body.Verify(); err != nil {
		return err
	}
	// A file the manifest does not list is ignored, not a refusal of the
	// package: producers leave files beside the bitstreams (a README, an
	// older manifest), and every bitstream the manifest does list is
	// still verified. It is never read; Unlisted reports it.
	p.unlisted, p.unlistedNames = 0, nil
	for _, f := range p.zr.File {
		if _, ok := c.listed[f.Name]; !ok && f.Name != ManifestName && !isDir(f) {
			p.unlisted++
			if len(p.unlistedNames) < maxUnlistedNames {
				p.unlistedNames = append(p.unlistedNames, f.Name)
			}
		}
	}
	p.header, p.count = h, n
	return nil
}

// maxUnlistedNames bounds the names of unlisted files a Package keeps.
const maxUnlistedNames = 3

// Unlisted reports how many files the package holds that its manifest
// does not list, and the names of the first few. They are ignored.
func (p *Package) Unlisted() (n int, names []string) { return p.unlisted, p.unlistedNames }

// manifestErr turns a reader error into a refusal, keeping the *Error of
// a Body (a limit, a corrupt entry) as it is.
func (p *Package) manifestErr(err error, doing string) error {
	var de *Error
	if errors.As(err, &de) {
		return de
	}
	return refuse(p.name, ManifestName, ErrManifest, err, "%s", doing)
}

// checkManifest is Open's pass over the manifest.
func (p *Package) checkManifest() error { return p.walk(context.Background(), nil) }

// entryChecker holds what checking one entry needs to know of the
// entries before it.
type entryChecker struct {
	p      *Package
	h      *resourcesync.Header
	change bool
	listed map[string]struct{}
	last   resourcesync.Entry // previous change, for the order check
}

// check applies the spec's rules for manifest entries (sections 11.2 and
// 13.2) and returns the ZIP entry the entry's path names.
func (c *entryChecker) check(e *resourcesync.Entry) (*zip.File, error) {
	p := c.p
	where := lazyWhere{e}
	md := e.MD
	if md == nil {
		md = &resourcesync.MD{}
	}
	if c.change {
		switch md.Change {
		case resourcesync.Created, resourcesync.Updated, resourcesync.Deleted:
		case "":
			return nil, refuse(p.name, where.String(), ErrManifest, nil, "change entry without a change attribute")
		default:
			return nil, refuse(p.name, where.String(), ErrManifest, nil, "unknown change %q", md.Change)
		}
		t := e.ChangeTime()
		switch {
		case t.IsZero():
			return nil, refuse(p.name, where.String(), ErrManifest, nil, "change entry without lastmod or datetime")
		case t.Before(c.h.MD.From) || !c.h.MD.Until.IsZero() && t.After(c.h.MD.Until):
			return nil, refuse(p.name, where.String(), ErrManifest, nil, "change at %s outside the manifest's from/until", resourcesync.FormatTime(t))
		case !c.last.ChangeTime().IsZero() && t.Before(c.last.ChangeTime()):
			return nil, refuse(p.name, where.String(), ErrManifest, nil, "change at %s listed after one at %s (not chronological)",
				resourcesync.FormatTime(t), resourcesync.FormatTime(c.last.ChangeTime()))
		}
		c.last.LastMod = t
		if md.Change == resourcesync.Deleted {
			if md.Path != "" {
				return nil, refuse(p.name, where.String(), ErrManifest, nil, "deleted entry with a path")
			}
			return nil, nil
		}
	} else if md.Change == resourcesync.Deleted {
		return nil, refuse(p.name, where.String(), ErrManifest, nil, "deleted entry in a Resource Dump Manifest")
	}
	if md.Path == "" {
		return nil, refuse(p.name, where.String(), ErrManifest, nil, "entry without a path")
	}
	name, why := zipName(md.Path)
	if why != "" {
		return nil, refuse(p.name, where.String(), ErrUnsafe, nil, "path %q: %s", md.Path, why)
	}
	if name == ManifestName {
		return nil, refuse(p.name, where.String(), ErrManifest, nil, "path names the manifest itself")
	}
	f := p.files[name]
	if f == nil || isDir(f) {
		return nil, refuse(p.name, where.String(), ErrMismatch, nil, "path %q is not in the package", md.Path)
	}
	if _, dup := c.listed[name]; dup {
		return nil, refuse(p.name, where.String(), ErrMismatch, nil, "path %q listed twice", md.Path)
	}
	c.listed[name] = struct{}{}
	if md.Length != nil && uint64(*md.Length) != f.UncompressedSize64 {
		return nil, refuse(p.name, where.String(), ErrMismatch, nil, "length %d, the ZIP entry holds %d bytes", *md.Length, f.UncompressedSize64)
	}
	return f, nil
}

// lazyWhere names a manifest entry in a refusal. The name is built only
// when a refusal needs it: formatting it for every entry of every walk
// cost two allocations per entry.
type lazyWhere struct{ e *resourcesync.Entry }

func (w lazyWhere) String() string { return fmt.Sprintf("%s (manifest line %d)", w.e.Loc, w.e.Line) }
