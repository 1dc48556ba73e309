package harvester

import (
	"context"
	"fmt"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// dumpBaseline is a baseline from the Resource Dumps at uris (or their
// Indexes; a Capability List may offer several, all read into one
// baseline):
// each package in turn is downloaded, verified whole, its differing
// bitstreams stored and their changes queued. The rest (deletions, cursor)
// is as for a Resource List. A package refused part-way through the Dump
// fails the baseline; the packages before it stay queued, which is as
// harmless as a baseline interrupted by a crash.
func (p *pass) dumpBaseline(ctx context.Context, uris []string, hasChanges bool) error {
	b := p.newRun(ctx)
	defer p.trackProgress(ctx)()
	bad := p.badEntries
	for _, uri := range uris {
		pkgs, err := p.dumpParts(ctx, uri, resourcesync.KindResourceDump, resourcesync.KindResourceDumpIndex, b)
		if err != nil {
			return err
		}
		for _, pkg := range pkgs {
			if err := p.baselinePackage(ctx, pkg.Loc, b); err != nil {
				return err
			}
		}
	}
	return p.finishBaseline(ctx, uris[0], b, bad, hasChanges)
}

// dumpParts reads a Dump (kind) or a Dump Index (index) at uri and returns
// its packages in order, with their from and until; an Index's Dumps are
// read in turn. b, when set, notes each document's at.
func (p *pass) dumpParts(ctx context.Context, uri string, kind, index resourcesync.Kind, b *baselineRun) ([]child, error) {
	d, err := p.open(ctx, uri, validators{})
	if err != nil {
		return nil, err
	}
	h := d.r.Header()
	if b != nil {
		b.noteAt(h.MD.At)
	}
	k := h.Kind()
	if k != kind && k != index {
		d.Close()
		p.h.m.errors.WithLabelValues(p.src.Name, kindDocument).Inc()
		return nil, fmt.Errorf("source %s: %s is a %s, not a %s or %s", p.src.Name, uri, k, kind, index)
	}
	children, err := p.readIndex(d)
	d.Close()
	if err != nil || k == kind {
		return children, err
	}
	var out []child
	for _, c := range children {
		cd, err := p.open(ctx, c.Loc, validators{})
		if err != nil {
			return nil, err
		}
		if ck := cd.r.Header().Kind(); ck != kind {
			cd.Close()
			p.h.m.errors.WithLabelValues(p.src.Name, kindDocument).Inc()
			return nil, fmt.Errorf("source %s: %s, listed by %s %s, is a %s", p.src.Name, c.Loc, index, uri, ck)
		}
		if b != nil {
			b.noteAt(cd.r.Header().MD.At)
		}
		parts, err := p.readIndex(cd)
		cd.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, parts...)
	}
	return out, nil
}

// baselinePackage compares every entry of one Resource Dump package with
// the catalog, then stores and queues those that differ. Nothing is
// stored, queued or counted as listed until the whole package has been
// verified.
func (p *pass) baselinePackage(ctx context.Context, uri string, b *baselineRun) error {
	d, err := p.openPackage(ctx, uri, resourcesync.KindResourceDumpManifest)
	if err != nil {
		return err
	}
	defer d.close()
	at := d.Header().MD.At
	take := make([]*viaduct.Change, d.Len())
	var listed []string
	doc := &document{uri: uri}
	err = p.check(ctx, d, func(i int, e *resourcesync.Entry) error {
		if !p.allowed(doc, e) {
			return nil
		}
		listed = append(listed, e.Loc)
		op, err := p.compare(ctx, b, e)
		if err != nil || op == "" {
			return err
		}
		t := e.LastMod
		if t.IsZero() {
			t = at
		}
		take[i] = p.change(uri, e, op, t)
		take[i].Listed = at // the resource was as listed at the package's at
		return nil
	})
	if err != nil {
		return err
	}
	if err := p.store(ctx, d, take); err != nil {
		return err
	}
	b.noteAt(at)
	for _, l := range listed {
		b.seen.add(l)
	}
	n := 0
	q := p.newBatch()
	for _, c := range take {
		if c == nil {
			continue
		}
		if err := q.add(ctx, c); err != nil {
			return err
		}
		n++
	}
	if err := q.flush(ctx); err != nil {
		return err
	}
	b.emitted += n
	p.log.Info("Resource Dump package processed", "uri", uri, "entries", d.Len(), "queued", n)
	return nil
}
