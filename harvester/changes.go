package harvester

import (
	"context"
	"errors"
	"fmt"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// incremental processes the Change List Index (or lone Change List) at
// uri from the change cursor on. Unchanged documents are not read again:
// every GET is conditional on the validators kept from the last read.
func (p *pass) incremental(ctx context.Context, uri string) error {
	d, err := p.open(ctx, uri, p.st.validators[uri])
	var children []child
	switch {
	case errors.Is(err, errNotModified):
		if p.st.index.URI != uri {
			return nil // a lone Change List, unchanged
		}
		p.readIndexToo = true
		children = p.st.index.Children
	case err != nil:
		return err
	default:
		switch k := d.r.Header().Kind(); k {
		case resourcesync.KindChangeList:
			defer d.Close()
			if err := p.covers(uri, d.r.Header().MD.From); err != nil {
				return err
			}
			return p.changeList(ctx, d)
		case resourcesync.KindChangeListIndex:
			p.readIndexToo = true
			children, err = p.readIndex(d)
			d.Close()
			if err != nil {
				return err
			}
			p.st.index = savedIndex{URI: uri, Children: children}
			if err := p.setJSON(ctx, curIndex, p.st.index); err != nil {
				return err
			}
			if err := p.keepValidators(ctx, uri, d.val); err != nil {
				return err
			}
		default:
			d.Close()
			p.h.m.errors.WithLabelValues(p.src.Name, kindDocument).Inc()
			return fmt.Errorf("source %s: %s is a %s, not a Change List or Change List Index", p.src.Name, uri, k)
		}
	}
	if err := p.covers(uri, earliest(children)); err != nil {
		return err
	}
	for _, c := range children {
		if !c.Until.IsZero() && c.Until.Before(p.st.changes) {
			continue // closed before the cursor: fully processed
		}
		cd, err := p.open(ctx, c.Loc, p.st.validators[c.Loc])
		if errors.Is(err, errNotModified) {
			continue
		}
		if err != nil {
			return err
		}
		if k := cd.r.Header().Kind(); k != resourcesync.KindChangeList {
			cd.Close()
			p.h.m.errors.WithLabelValues(p.src.Name, kindDocument).Inc()
			return fmt.Errorf("source %s: %s, listed by Change List Index %s, is a %s", p.src.Name, c.Loc, uri, k)
		}
		err = p.changeList(ctx, cd)
		cd.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// readIndex reads the Change Lists of an Index, in its order.
func (p *pass) readIndex(d *document) ([]child, error) {
	var out []child
	for {
		e, err := p.next(d)
		if errors.Is(err, errEOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		c := child{Loc: resolve(d.uri, e.Loc)}
		if e.MD != nil {
			c.From, c.Until = e.MD.From, e.MD.Until
		}
		out = append(out, c)
	}
}

// changeList processes one Change List by the rules of queueChanges,
// always moving the cursor to the greatest change time read, then keeps
// the list's validators for the next read to be conditional.
func (p *pass) changeList(ctx context.Context, d *document) error {
	n, err := p.queueChanges(ctx, d, "Change List", d.r.Header().MD.From, func() (*resourcesync.Entry, error) { return p.next(d) }, true)
	if err != nil {
		return err
	}
	if n > 0 {
		p.log.Info("Change List processed", "uri", d.uri, "queued", n, "cursor", p.st.changes)
	}
	return p.keepValidators(ctx, d.uri, d.val)
}

// keepValidators records a processed document's validators, for the next
// read to be conditional, and forgets those of documents no longer listed.
func (p *pass) keepValidators(ctx context.Context, uri string, v validators) error {
	if v.ETag == "" && v.LastModified == "" {
		return nil
	}
	if p.held != nil {
		p.held.vals[uri] = v
		return nil
	}
	p.st.validators[uri] = v
	keep := map[string]bool{uri: true, p.st.index.URI: true}
	for _, c := range p.st.index.Children {
		keep[c.Loc] = true
	}
	for k := range p.st.validators {
		if !keep[k] {
			delete(p.st.validators, k)
		}
	}
	return p.setJSON(ctx, curValidators, p.st.validators)
}
