package harvester

import (
	"context"
	"errors"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// setWork is one capability set as a pass harvests it: what its
// Capability List offers and its cursors.
type setWork struct {
	cs   *capSet
	caps capabilities
	st   state
}

func (w *setWork) hasChanges(p *pass) bool {
	return len(w.caps[resourcesync.CapChangeList]) > 0 || p.dumpsUsable(w.caps.first(resourcesync.CapChangeDump))
}

// enter makes w the set the pass works on; leave keeps its state.
func (p *pass) enter(w *setWork) { p.cs, p.st = w.cs, w.st }
func (p *pass) leave(w *setWork) { w.st = p.st }

// do is one pass over every capability set of the Source. The sets of
// one collection are baselined together: when one is due, all are, into
// one set of URIs seen, so that a resource one set lists is never deleted
// for being absent from another's list. A set whose Change Lists no
// longer reach back to its cursor (a gap) is baselined then, with the
// rest of its collection, and its changes read again from the baseline's
// at. A set that fails is logged and the others are still harvested; the
// pass then fails with every set's error.
func (p *pass) do(ctx context.Context) error {
	sets, err := p.sets(ctx)
	if err != nil {
		return err
	}
	var works []*setWork
	var errs []error
	for _, cs := range sets {
		p.cs = cs
		if err := p.loadState(ctx); err != nil {
			return err
		}
		caps, err := p.capabilities(ctx)
		if err != nil {
			if ctx.Err() != nil || cs.Key == "" {
				return err
			}
			p.log.Error("capability set not harvested this pass", "uri", cs.URI, "err", err)
			errs = append(errs, err)
			continue
		}
		if cs.Key == "" {
			p.channel(ctx)
		}
		w := &setWork{cs: cs, caps: caps, st: p.st}
		if w.hasChanges(p) && !p.canBaseline(caps) {
			p.tolerate(cs.URI, tolChangeListOnly, 1)
		}
		works = append(works, w)
	}
	p.shareSeen(works)
	due := map[string]bool{}
	for _, w := range works {
		p.enter(w)
		if p.baselineDue(w.hasChanges(p)) {
			due[w.cs.Collection] = true
		}
	}
	errs = append(errs, p.baselines(ctx, works, due)...)
	gapped := map[string]bool{}
	for _, w := range works {
		p.enter(w)
		if w.hasChanges(p) && ctx.Err() == nil {
			err := p.changesAny(ctx, w.caps)
			var g *gapError
			if errors.As(err, &g) {
				if !p.canBaseline(w.caps) {
					p.closedGap(err, GapNone)
					p.st.changes = time.Time{} // read what is still offered
					err = p.changesAny(ctx, w.caps)
				} else {
					gapped[w.cs.Collection] = true
					p.closedGap(err, GapBaseline)
					err = nil
				}
			}
			if err != nil {
				errs = append(errs, err)
			}
		}
		p.leave(w)
	}
	if len(gapped) > 0 {
		errs = append(errs, p.baselines(ctx, works, gapped)...)
		for _, w := range works {
			if !gapped[w.cs.Collection] || !w.hasChanges(p) || ctx.Err() != nil {
				continue
			}
			p.enter(w)
			if err := p.changesAny(ctx, w.caps); err != nil {
				var g *gapError
				if errors.As(err, &g) {
					// Its Change Lists start after the baseline's at too: the
					// next pass baselines again rather than skip the window.
					p.log.Warn("Change Lists start after the baseline's at; read at the next pass", "uri", g.doc)
					err = nil
				}
				if err != nil {
					errs = append(errs, err)
				}
			}
			p.leave(w)
		}
	}
	if len(works) > 0 && works[0].cs.Key == "" {
		p.enter(works[0]) // the primary set's cursor is the Source's
	}
	return errors.Join(errs...)
}

// baselines runs the baselines of the sets whose collection is in due,
// then the deletions deferred for collections several sets share.
func (p *pass) baselines(ctx context.Context, works []*setWork, due map[string]bool) []error {
	if len(due) == 0 {
		return nil
	}
	var errs []error
	failed := map[string]bool{}
	p.deferred = map[string]*baselineRun{}
	for _, w := range works {
		if !due[w.cs.Collection] || ctx.Err() != nil {
			continue
		}
		p.enter(w)
		if err := p.baselineAny(ctx, w.caps, w.hasChanges(p)); err != nil {
			errs = append(errs, err)
			failed[w.cs.Collection] = true
		}
		p.leave(w)
	}
	for col, b := range p.deferred {
		if failed[col] || b.bad || ctx.Err() != nil {
			if b.bad {
				p.h.m.errors.WithLabelValues(p.src.Name, kindDeletesSkipped).Inc()
				p.log.Warn("a baseline of the collection had unreadable entries or a set without a Resource List, deletions not inferred this time", "collection", col)
			}
			continue
		}
		if err := p.deleteMissing(ctx, col, p.src.URL, b); err != nil {
			errs = append(errs, err)
		}
	}
	p.deferred = nil
	// Each collection's seen URIs start afresh for the next baselines.
	for col := range p.shared {
		p.shared[col] = newURISet()
	}
	return errs
}

// shareSeen gives the collections that several sets share one set of
// URIs seen, so that their deletions are inferred once, from all lists.
func (p *pass) shareSeen(works []*setWork) {
	n := map[string]int{}
	for _, w := range works {
		n[w.cs.Collection]++
	}
	for col, k := range n {
		if k > 1 {
			if p.shared == nil {
				p.shared = map[string]*uriSet{}
			}
			p.shared[col] = newURISet()
		}
	}
}

// newRun starts one set's baseline: its own URIs seen, or its
// collection's shared ones.
func (p *pass) newRun(ctx context.Context) *baselineRun {
	seen := p.shared[p.collection()]
	if seen == nil {
		seen = newURISet()
	}
	return &baselineRun{seen: seen, nothingHeld: p.heldNothing(ctx)}
}

// deferDeletes keeps a set's baseline for the deletions of its shared
// collection: the earliest at of all, and whether any had unreadable
// entries.
func (p *pass) deferDeletes(b *baselineRun, bad bool) {
	col := p.collection()
	if p.deferred == nil {
		p.deferred = map[string]*baselineRun{}
	}
	d := p.deferred[col]
	if d == nil {
		d = &baselineRun{seen: p.shared[col]}
		p.deferred[col] = d
	}
	d.noteAt(b.at)
	d.bad = d.bad || bad
}
