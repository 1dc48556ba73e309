package harvester

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"
)

// severalChangeLists reads every Change List (or Index) a Capability
// List names, from one cursor, moving it once all are queued (heldAdvance).
// DSpace names its newest Change List and an Index of all of them: when
// the newest no longer reaches back to the cursor and the Index does, the
// gap is closed by the Index.
func (p *pass) severalChangeLists(ctx context.Context, cls []string) error {
	p.held = &heldAdvance{vals: map[string]validators{}}
	defer func() { p.held = nil }()
	var gap error
	byIndex := false
	for _, u := range cls {
		p.readIndexToo = false
		err := p.incremental(ctx, u)
		var g *gapError
		switch {
		case errors.As(err, &g):
			gap = err
			continue
		case err != nil:
			return err
		}
		byIndex = byIndex || p.readIndexToo
	}
	if gap != nil {
		if !byIndex {
			return gap
		}
		p.closedGap(gap, GapIndex)
	}
	h := p.held
	p.held = nil
	if !h.t.IsZero() {
		if err := p.advance(ctx, h.t, h.ids); err != nil {
			return err
		}
	}
	if len(h.vals) == 0 {
		return nil
	}
	// Validators are kept for every list named and the Index's children
	// (a list answered 304 this pass keeps the ones it had).
	keep := map[string]bool{p.st.index.URI: true}
	for _, u := range cls {
		keep[u] = true
	}
	for _, c := range p.st.index.Children {
		keep[c.Loc] = true
	}
	for _, k := range slices.Collect(maps.Keys(p.st.validators)) {
		if !keep[k] {
			delete(p.st.validators, k)
		}
	}
	maps.Copy(p.st.validators, h.vals)
	return p.setJSON(ctx, curValidators, p.st.validators)
}

// heldAdvance gathers the cursor's move over several Change Lists read as
// one (a Capability List naming several): the cursor moves once, after
// all of them are queued, so that a list read later is not cut by the
// greatest time of one read before it, and validators are kept only then,
// so that a crash in between reads them all again.
type heldAdvance struct {
	t    time.Time
	ids  []string
	vals map[string]validators
}

func (h *heldAdvance) note(t time.Time, ids []string) {
	switch {
	case t.After(h.t):
		h.t, h.ids = t, append([]string(nil), ids...)
	case t.Equal(h.t):
		h.ids = append(h.ids, ids...)
	}
}
