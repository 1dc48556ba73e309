package harvester

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// baselineRun is what one baseline has gathered: the URIs listed and the
// earliest at of the documents read.
type baselineRun struct {
	seen    *uriSet
	at      time.Time
	emitted int
	// nothingHeld is true when the collection held no resources as the
	// baseline began: every entry is then a creation, and the catalog is
	// not asked about each (see heldNothing).
	nothingHeld bool
	// bad is set on a shared collection's deferred deletions when one of
	// its sets' baselines had unreadable entries.
	bad bool
}

// heldCounter is a Held that counts a collection's resources.
type heldCounter interface {
	CountResources(ctx context.Context, collection string) (n int, bytes int64, err error)
}

// heldNothing reports whether the Source's collection holds no resources,
// so that a first baseline, often of millions, skips one catalog lookup
// per entry. Entries it then calls creations may meet a resource that
// arrived meanwhile (a push, the same URI listed twice); the fetch worker
// finds it in the catalog and the catalog records what it applies, as for
// any change that crossed another. A Held that cannot count, or a count
// that fails, means looking up every entry, as before.
func (p *pass) heldNothing(ctx context.Context) bool {
	hc, ok := p.h.deps.Held.(heldCounter)
	if !ok {
		return false
	}
	n, _, err := hc.CountResources(ctx, p.collection())
	if err != nil {
		p.log.Warn("counting the collection's resources failed; comparing every entry", "err", err)
		return false
	}
	return n == 0
}

func (b *baselineRun) noteAt(t time.Time) {
	if !t.IsZero() && (b.at.IsZero() || t.Before(b.at)) {
		b.at = t
	}
}

// baseline reads the Resource Lists at uris (or every part of their
// Indexes, and every page a list links to with rel="next": pages.go) as
// one baseline, queues a
// created or updated change for each entry that differs from what the
// aggregator holds, then, when the Source's delete_missing says so, a
// deleted change for each resource held that the list no longer has.
// When the Source offers Change Lists, the change cursor becomes the
// list's at: changes from then on are what remains to process.
func (p *pass) baseline(ctx context.Context, uris []string, hasChangeList bool) error {
	b := p.newRun(ctx)
	defer p.trackProgress(ctx)()
	bad := p.badEntries
	for _, uri := range uris {
		d, err := p.open(ctx, uri, validators{})
		if err != nil {
			return err
		}
		h := d.r.Header()
		b.noteAt(h.MD.At)
		switch k := h.Kind(); k {
		case resourcesync.KindResourceList, resourcesync.KindSitemap:
			err = p.baselinePages(ctx, d, b)
		case resourcesync.KindResourceListIndex:
			err = p.baselineIndex(ctx, d, b)
		default:
			d.Close()
			p.h.m.errors.WithLabelValues(p.src.Name, kindDocument).Inc()
			err = fmt.Errorf("source %s: %s is a %s, not a Resource List or Resource List Index", p.src.Name, uri, k)
		}
		if err != nil {
			return err
		}
	}
	return p.finishBaseline(ctx, uris[0], b, bad, hasChangeList)
}

// finishBaseline ends a baseline whose entries have all been read from
// uri (a Resource List or Resource Dump, or their Index): the deletions it
// implies, the change cursor, the time it completed.
func (p *pass) finishBaseline(ctx context.Context, uri string, b *baselineRun, bad int, hasChangeList bool) error {
	if p.src.deleteMissing {
		if p.shared[p.collection()] != nil {
			p.deferDeletes(b, p.badEntries > bad)
		} else if p.badEntries > bad {
			// An entry that could not be read may be a resource the Source
			// still has: deleting on its absence could lose it.
			p.h.m.errors.WithLabelValues(p.src.Name, kindDeletesSkipped).Inc()
			p.log.Warn("baseline had unreadable entries, deletions not inferred this time", "uri", uri, "bad", p.badEntries-bad)
		} else if err := p.deleteMissing(ctx, p.collection(), uri, b); err != nil {
			return err
		}
	}
	if hasChangeList && !b.at.IsZero() {
		if err := p.set(ctx, curChanges, b.at.UTC().Format(time.RFC3339Nano)); err != nil {
			return err
		}
		p.st.changes, p.st.tie = b.at, map[string]bool{}
	}
	p.log.Info("baseline done", "uri", uri, "listed", b.seen.len(), "queued", b.emitted, "at", b.at)
	now := time.Now()
	p.st.baseline = now
	return p.set(ctx, curBaseline, now.UTC().Format(time.RFC3339Nano))
}

// baselineIndex walks every Resource List of an Index, in order; d is
// closed before the parts are read.
func (p *pass) baselineIndex(ctx context.Context, d *document, b *baselineRun) error {
	var parts []string
	for {
		e, err := p.next(d)
		if errors.Is(err, errEOF) {
			break
		}
		if err != nil {
			d.Close()
			return err
		}
		parts = append(parts, resolve(d.uri, e.Loc))
	}
	d.Close()
	for _, part := range parts {
		pd, err := p.open(ctx, part, validators{})
		if err != nil {
			return err
		}
		if k := pd.r.Header().Kind(); k != resourcesync.KindResourceList && k != resourcesync.KindSitemap {
			pd.Close()
			p.h.m.errors.WithLabelValues(p.src.Name, kindDocument).Inc()
			return fmt.Errorf("source %s: %s, listed by Resource List Index %s, is a %s", p.src.Name, part, d.uri, k)
		}
		b.noteAt(pd.r.Header().MD.At)
		if err = p.baselinePages(ctx, pd, b); err != nil {
			return err
		}
	}
	return nil
}

// baselineList compares every entry of one Resource List with the catalog.
func (p *pass) baselineList(ctx context.Context, d *document, b *baselineRun) error {
	listAt := d.r.Header().MD.At
	q := p.newBatch()
	for {
		e, err := p.next(d)
		if errors.Is(err, errEOF) {
			return q.flush(ctx)
		}
		if err != nil {
			return err
		}
		if !p.allowed(d, e) {
			continue
		}
		b.seen.add(e.Loc)
		op, err := p.compare(ctx, b, e)
		if err != nil {
			return err
		}
		if op == "" {
			continue
		}
		t := e.LastMod
		if t.IsZero() {
			t = listAt
		}
		c := p.change(d.uri, e, op, t)
		c.Listed = listAt // the resource was as listed at the list's at
		c.Fresh = b.nothingHeld
		if err := q.add(ctx, c); err != nil {
			return err
		}
		b.emitted++
	}
}

// compare says what a baseline entry means given what the aggregator
// holds: created, updated, or "" when nothing differs.
func (p *pass) compare(ctx context.Context, b *baselineRun, e *resourcesync.Entry) (string, error) {
	if b.nothingHeld {
		return resourcesync.Created, nil
	}
	r, found, err := p.h.deps.Held.Lookup(ctx, p.collection(), e.Loc)
	if err != nil {
		p.h.m.errors.WithLabelValues(p.src.Name, kindCatalog).Inc()
		return "", fmt.Errorf("source %s: look up %s in the catalog: %w", p.src.Name, e.Loc, err)
	}
	if !found || r.Deleted {
		return resourcesync.Created, nil
	}
	if differs(&r, e) {
		return resourcesync.Updated, nil
	}
	return "", nil
}

// differs compares an entry with the resource held, on what the entry
// states: a digest of an algorithm the catalog keeps, the length, the
// lastmod.
func differs(r *catalog.Lookup, e *resourcesync.Entry) bool {
	if e.MD != nil {
		if v := e.MD.Hash.Get(resourcesync.SHA256); v != "" && r.SHA256 != "" && v != r.SHA256 {
			return true
		}
		if v := e.MD.Hash.Get(resourcesync.MD5); v != "" && r.MD5 != "" && v != r.MD5 {
			return true
		}
		if e.MD.Length != nil && *e.MD.Length != r.Length {
			return true
		}
	}
	return !e.LastMod.IsZero() && !e.LastMod.Equal(r.UpstreamModified)
}

// deleteMissing queues a deletion for each resource held from the Source
// that the baseline did not list. A resource whose last change at the
// Source is later than the list's at was created after the snapshot, and is
// left alone.
func (p *pass) deleteMissing(ctx context.Context, collection, uri string, b *baselineRun) error {
	var perr error
	q := p.newBatch()
	err := p.h.deps.Held.SourceHeld(ctx, p.src.Name, collection, func(r *catalog.HeldEntry) error {
		if b.seen.has(r.URI) {
			return nil
		}
		if !b.at.IsZero() && r.UpstreamTime.After(b.at) {
			return nil
		}
		// The catalog reads a page before calling back, so queuing here
		// holds no transaction open.
		if perr = q.add(ctx, &viaduct.Change{
			Source: p.src.Name, Collection: r.Collection, URI: r.URI, Op: resourcesync.Deleted,
			Time: b.at, Doc: uri,
		}); perr != nil {
			return perr
		}
		b.emitted++
		return nil
	})
	if perr != nil {
		return perr
	}
	if err != nil {
		p.h.m.errors.WithLabelValues(p.src.Name, kindCatalog).Inc()
		return fmt.Errorf("source %s: list resources held to find those %s no longer lists: %w", p.src.Name, uri, err)
	}
	return q.flush(ctx)
}
