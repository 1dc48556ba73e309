package harvester

import (
	"context"
	"encoding/json"
	"fmt"
)

// curSets holds the cursors of a Source's capability sets other than its
// primary one (see capSet), as one JSON object: set key -> cursor name ->
// value. One cursor rather than one per set and name keeps the set of
// cursor names fixed, so that CursorNames still names everything a node
// carries over and a re-baseline forgets.
const curSets = "sets"

// cursor reads one cursor of the capability set being harvested: the
// Source's own cursor for the primary set, else its entry in curSets.
func (p *pass) cursor(ctx context.Context, name string) (string, error) {
	if p.cs != nil && p.cs.Key != "" {
		if err := p.loadExtra(ctx); err != nil {
			return "", err
		}
		return p.extra[p.cs.Key][name], nil
	}
	v, err := p.h.deps.Cursors.Cursor(ctx, p.src.Name, name)
	if err != nil {
		return "", fmt.Errorf("source %s: read cursor %s: %w", p.src.Name, name, err)
	}
	return v, nil
}

// loadExtra reads curSets once per pass. A value that cannot be decoded
// is read as empty: the sets are then harvested from their baselines
// again, which loses nothing.
func (p *pass) loadExtra(ctx context.Context) error {
	if p.extra != nil {
		return nil
	}
	v, err := p.h.deps.Cursors.Cursor(ctx, p.src.Name, curSets)
	if err != nil {
		return fmt.Errorf("source %s: read cursor %s: %w", p.src.Name, curSets, err)
	}
	p.extra = map[string]map[string]string{}
	if v != "" && json.Unmarshal([]byte(v), &p.extra) != nil {
		p.log.Warn("cursor of the capability sets unreadable; the extra sets start from a baseline", "cursor", curSets)
		p.extra = map[string]map[string]string{}
	}
	return nil
}

// setExtra stores one cursor of a non-primary set.
func (p *pass) setExtra(ctx context.Context, name, value string) error {
	if err := p.loadExtra(ctx); err != nil {
		return err
	}
	m := p.extra[p.cs.Key]
	if m == nil {
		m = map[string]string{}
		p.extra[p.cs.Key] = m
	}
	m[name] = value
	b, err := json.Marshal(p.extra)
	if err != nil {
		return fmt.Errorf("source %s: encode cursor %s: %w", p.src.Name, curSets, err)
	}
	if err := p.h.deps.Cursors.SetCursor(ctx, p.src.Name, curSets, string(b)); err != nil {
		p.h.m.errors.WithLabelValues(p.src.Name, kindCatalog).Inc()
		return fmt.Errorf("source %s: set cursor %s: %w", p.src.Name, curSets, err)
	}
	return nil
}
