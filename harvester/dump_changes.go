package harvester

import (
	"context"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// changeDump catches up from the Change Dump at uri (or its Index): its
// packages in order, from the change cursor on, with the cursor rules of
// Change Lists (docs/harvesting.md). A package whose until is at or before
// the cursor has been processed and is not downloaded again. An open
// package (no until) is read only when openToo says so, that is when the
// Source offers no Change List to read the open period from; otherwise
// the walk stops there and the Change List carries on from the cursor.
func (p *pass) changeDump(ctx context.Context, uri string, openToo bool) error {
	pkgs, err := p.dumpParts(ctx, uri, resourcesync.KindChangeDump, resourcesync.KindChangeDumpIndex, nil)
	if err != nil {
		return err
	}
	if err := p.covers(uri, earliest(pkgs)); err != nil {
		return err
	}
	for _, c := range pkgs {
		if c.Until.IsZero() && !openToo {
			break
		}
		if !c.Until.IsZero() && !c.Until.After(p.st.changes) {
			continue
		}
		if err := p.changePackage(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

// changePackage applies one Change Dump package: after the whole package
// has been verified, it keeps the changes at or after the cursor (less
// those already queued at exactly the cursor's time), coalesces several
// changes of one URI into the last, stores the bitstreams of the changes
// kept, queues them in order, and only then advances the cursor: to the
// greatest change time read, and to the package's until when it is closed,
// since every change before until has then been seen.
func (p *pass) changePackage(ctx context.Context, c child) error {
	d, err := p.openPackage(ctx, c.Loc, resourcesync.KindChangeDumpManifest)
	if err != nil {
		return err
	}
	defer d.close()
	take := make([]*viaduct.Change, d.Len())
	last := map[string]int{}
	var (
		maxT  time.Time
		atMax []string
	)
	doc := &document{uri: c.Loc}
	// dump.Open has already refused changes without a change or a time,
	// out of order, or outside the manifest's from and until.
	err = p.check(ctx, d, func(i int, e *resourcesync.Entry) error {
		t := e.ChangeTime()
		if t.Before(p.st.changes) || !p.allowed(doc, e) {
			return nil
		}
		ch := p.change(c.Loc, e, e.MD.Change, t)
		id := ch.MsgID()
		if t.After(maxT) {
			maxT, atMax = t, atMax[:0]
		}
		atMax = append(atMax, id)
		if t.Equal(p.st.changes) && p.st.tie[id] {
			return nil // queued by an earlier read
		}
		if j, ok := last[ch.URI]; ok {
			take[j] = nil
		}
		last[ch.URI] = i
		take[i] = ch
		return nil
	})
	if err != nil {
		return err
	}
	if err := p.store(ctx, d, take); err != nil {
		return err
	}
	n := 0
	q := p.newBatch()
	for _, ch := range take {
		if ch == nil {
			continue
		}
		if err := q.add(ctx, ch); err != nil {
			return err
		}
		n++
	}
	// The cursor moves only past changes queued.
	if err := q.flush(ctx); err != nil {
		return err
	}
	if !maxT.IsZero() {
		if err := p.advance(ctx, maxT, atMax); err != nil {
			return err
		}
	}
	until := c.Until
	if u := d.Header().MD.Until; !u.IsZero() && (until.IsZero() || u.Before(until)) {
		until = u
	}
	if !c.Until.IsZero() && until.After(p.st.changes) {
		if err := p.advance(ctx, until, nil); err != nil {
			return err
		}
	}
	p.log.Info("Change Dump package processed", "uri", c.Loc, "entries", d.Len(), "queued", n, "cursor", p.st.changes)
	return nil
}
