package harvester

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// queueChanges queues the changes that next yields (until errEOF) by the
// rules a Change List and a notification share, so that both ways a change
// arrives queue it alike. Every entry is read before any is queued. Changes
// at or after the cursor are kept (equal times included, less those
// already queued at exactly that time), the Policy decides which URIs are
// wanted, and several changes of one URI are coalesced into the last.
// advance moves the cursor to the greatest change time read (or, while
// p.held is set, leaves that to the caller: see holdAdvance). what names
// the kind of document ("Change List", "notification") in logs and
// errors. It returns how many changes were queued.
//
// Entries out of forward chronological order (Hyrax lists newest first,
// AtoM writes live changes and then deletions, others are seconds out) are
// sorted by change time, stably, before anything is queued, and the
// document is counted once as tolerated. The changes kept are in memory
// until the document ends either way: bounded by max_entries, some 300
// bytes each.
//
// An entry without a time of its own (Change Notification 1.0.1 makes
// datetime and lastmod optional; Sources in the 1.0 style leave lastmod
// out of deletions) is applied all the same, in document order: it takes
// its place, for the cursor and for the catalog's ordering, from the
// change before it in the document, or from the document's from when it
// comes first. Its Change has no Time, so nothing claims a
// Source time the Source did not state; the aggregator's own change time
// is, as for every change, the one it republishes.
func (p *pass) queueChanges(ctx context.Context, d *document, what string, from time.Time, next func() (*resourcesync.Entry, error), advance bool) (int, error) {
	type kept struct {
		c     *viaduct.Change
		place time.Time
	}
	var (
		all      []kept
		prev     = from // the place of an entry without a time
		timed    time.Time
		untimed  int
		outOrder int
	)
	for {
		e, err := next()
		if errors.Is(err, errEOF) {
			break
		}
		if err != nil {
			return 0, err
		}
		if e.MD == nil || e.MD.Change == "" {
			p.badEntries++
			p.refuse(d.uri, kindEntry, "no change|"+e.Loc, func() string { return fmt.Sprintf("line %d: %s: %s entry without a change", e.Line, e.Loc, what) })
			continue
		}
		t := e.ChangeTime()
		place := t
		if t.IsZero() {
			place = prev
			untimed++
		} else {
			if t.Before(timed) {
				outOrder++
			} else {
				timed = t
			}
			prev = t
		}
		if (!place.IsZero() && place.Before(p.st.changes)) || !p.allowed(d, e) {
			continue
		}
		c := p.change(d.uri, e, e.MD.Change, t)
		if t.IsZero() {
			c.Listed = place
		}
		all = append(all, kept{c, place})
	}
	if outOrder > 0 {
		p.tolerate(d.uri, tolOutOfOrder, outOrder)
		sort.SliceStable(all, func(i, j int) bool { return all[i].place.Before(all[j].place) })
	}
	if untimed > 0 {
		p.log.Info(what+" entries without a time, applied in document order", "uri", d.uri, "entries", untimed)
	}
	var (
		batch []*viaduct.Change
		last  = map[string]int{}
		maxT  time.Time
		atMax []string // ids of every change at maxT, coalesced ones included
	)
	for _, k := range all {
		c, place := k.c, k.place
		id := c.MsgID()
		if place.After(maxT) {
			maxT, atMax = place, atMax[:0]
		}
		if !place.IsZero() && place.Equal(maxT) {
			atMax = append(atMax, id)
		}
		if place.Equal(p.st.changes) && p.st.tie[id] {
			continue // queued by an earlier read
		}
		if i, ok := last[c.URI]; ok {
			batch[i] = nil
		}
		last[c.URI] = len(batch)
		batch = append(batch, c)
	}
	n, err := p.queueBatch(ctx, batch)
	if err != nil {
		return 0, err
	}
	// The cursor moves only past changes queued.
	if advance && !maxT.IsZero() {
		if p.held != nil {
			p.held.note(maxT, atMax)
			return n, nil
		}
		if err := p.advance(ctx, maxT, atMax); err != nil {
			return n, err
		}
	}
	return n, nil
}

// queueBatch queues the changes of batch that coalescing left, in order,
// and returns once they are all durable on CHANGES.
func (p *pass) queueBatch(ctx context.Context, batch []*viaduct.Change) (int, error) {
	n := 0
	q := p.newBatch()
	for _, c := range batch {
		if c == nil {
			continue
		}
		if err := q.add(ctx, c); err != nil {
			return 0, err
		}
		n++
	}
	if err := q.flush(ctx); err != nil {
		return 0, err
	}
	return n, nil
}
