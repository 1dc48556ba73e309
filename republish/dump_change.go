package republish

import (
	"context"
	"fmt"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// Change Dump packages follow the Change Lists' periods. A period is
// closed once the catalog holds a change of the collection at or after its
// end (see changelist.go); each closed period with changes becomes one
// package holding its changes in order, with their bitstreams as they were
// at each change. Periods without changes get no package of their own: a
// package's from is the previous package's until, so it also covers the
// empty periods before it, and consecutive packages cover consecutive,
// non-overlapping intervals with no gap. A period with more changes than
// one package holds is cut at the time of the first change that did not
// fit. The first build reaches back PastPeriods periods at most; the
// Resource Dump built at the same start begins later, so the two together
// still cover everything.

// changeDumps packages the periods closed since ds.Next and returns the
// new packages and where the next one starts.
func (d *Dumps) changeDumps(ctx context.Context, coll string, ds *dumpState) ([]dumpPackage, time.Time, error) {
	s := d.s
	next := ds.Next
	st, err := s.cat.Stats(ctx, coll)
	if err != nil {
		return nil, next, fmt.Errorf("collection %s: stats: %w", coll, err)
	}
	if st.Last.IsZero() {
		return nil, next, nil
	}
	p := s.cfg.ChangeListPeriod
	open := s.periodStart(st.Last)
	if next.IsZero() {
		next = s.periodStart(st.First)
		if bound := open.Add(-time.Duration(d.cfg.PastPeriods) * p); bound.After(next) {
			next = bound
		}
	}
	if !next.Before(open) {
		return nil, next, nil
	}
	up := []resourcesync.Link{{Rel: "up", Href: s.capabilityListURL(coll)}}
	var (
		pkgs   []dumpPackage
		cur    *packageWriter
		h      *resourcesync.Header
		period time.Time
		from   = next
	)
	defer func() {
		if cur != nil {
			cur.abort()
		}
	}()
	// closeAt ends the current package at until; the next starts there.
	closeAt := func(until time.Time) error {
		h.MD.Until = until
		pk, err := cur.finish(ctx)
		cur = nil
		if err != nil {
			return err
		}
		pkgs = append(pkgs, pk)
		from = until
		return nil
	}
	b := s.newEntryBuilder(coll)
	err = s.cat.Changes(ctx, coll, next, open, func(rec *Record) error {
		ps := s.periodStart(rec.At)
		if cur != nil && !ps.Equal(period) {
			if err := closeAt(period.Add(p)); err != nil {
				return err
			}
		}
		period = ps
		e, err := b.change(ctx, rec)
		if err != nil {
			return err
		}
		for range 2 {
			if cur == nil {
				h = &resourcesync.Header{Links: up, MD: resourcesync.MD{Capability: resourcesync.CapChangeDumpManifest, From: from}}
				if cur, err = d.newPackage(ctx, h); err != nil {
					return err
				}
			}
			full, err := cur.add(ctx, e, rec)
			if err != nil || !full {
				return err
			}
			if err := closeAt(rec.At); err != nil {
				return err
			}
		}
		return fmt.Errorf("change of %s at %s: no room in an empty package", rec.URI, resourcesync.FormatTime(rec.At))
	})
	if err == nil && cur != nil {
		err = closeAt(period.Add(p))
	}
	if err != nil {
		return nil, ds.Next, fmt.Errorf("collection %s: change dump from %s: %w", coll, resourcesync.FormatTime(next), err)
	}
	if len(pkgs) == 0 {
		return nil, next, nil
	}
	return pkgs, from, nil
}
