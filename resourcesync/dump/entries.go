package dump

import (
	"archive/zip"
	"context"
	"fmt"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// Entries calls fn for each manifest entry, in manifest order (which, for
// a Change Dump Manifest, is the order of the changes). body is nil for a
// deletion; otherwise it yields the entry's bitstream, verified as it
// streams (see Body). fn should store the bytes provisionally and commit
// them only once body.Verify returned no error; if fn returns without
// doing so, Entries verifies the rest itself and returns the refusal.
// body is valid only until fn returns.
//
// A refusal can come after earlier entries were handed out, so a caller
// that must not act on half a package calls Check first.
func (p *Package) Entries(ctx context.Context, fn func(e *resourcesync.Entry, body *Body) error) error {
	p.unz, p.comp = 0, 0
	return p.walk(ctx, func(e *resourcesync.Entry, f *zip.File) error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("dump package %s: %w", p.name, err)
		}
		if f == nil {
			return fn(e, nil)
		}
		b, err := p.body(ctx, f, e.MD, e.Loc, p.lim.MaxEntryBytes)
		if err != nil {
			return err
		}
		if err := fn(e, b); err != nil {
			return err
		}
		_, err = b.Verify()
		return err
	})
}

// Check reads every bitstream of the package and verifies it, handing
// nothing out: after Check returned nil, Entries will not refuse the
// package (the file being unchanged). It is the "validate, then apply"
// half of applying a package whole or not at all.
func (p *Package) Check(ctx context.Context) error {
	return p.Entries(ctx, func(*resourcesync.Entry, *Body) error { return nil })
}
