package harvester

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// Names of a Source's cursors, as Deps.Cursors keeps them.
const (
	// curCapabilities is the Capability List URI found by discovery.
	curCapabilities = "capabilitylist"
	// curChanges is the greatest change time (the Source's) of a change
	// queued, or the at of the last baseline: changes at or after it are
	// still to be processed.
	curChanges = "changes"
	// curTie lists the changes queued at exactly curChanges, so that a
	// re-read list does not queue them again; see tie.
	curTie = "changes.tie"
	// curBaseline is when (local clock) the last baseline completed: only
	// the baseline schedule reads it.
	curBaseline = "baseline.completed"
	// curValidators holds the ETag and Last-Modified of the Change List
	// documents processed, for conditional GETs.
	curValidators = "validators"
	// curIndex keeps the children of the Change List Index last read, to
	// poll them when the index itself is unchanged.
	curIndex = "changelist.index"
)

// maxTie bounds the ids kept at one change time; past it, the changes of
// that time are queued again on the next read, which the stream's
// de-duplication and the catalog's comparison absorb.
const maxTie = 10000

// tie is the set of changes queued at exactly the cursor's time. The cursor
// alone would make every re-read of a growing Change List queue its last
// change again (equal times are never skipped, since another change may
// share the time); with the set only changes not yet queued are.
type tie struct {
	Time time.Time `json:"time"`
	IDs  []string  `json:"ids"`
}

// validators are a document's ETag and Last-Modified.
type validators struct {
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
}

// child is one Change List of an Index.
type child struct {
	Loc   string    `json:"loc"`
	From  time.Time `json:"from,omitzero"`
	Until time.Time `json:"until,omitzero"`
}

// savedIndex is the Change List Index as last read.
type savedIndex struct {
	URI      string  `json:"uri"`
	Children []child `json:"children"`
}

// state is a Source's cursors, read at the start of a pass.
type state struct {
	changes    time.Time
	tie        map[string]bool
	baseline   time.Time
	validators map[string]validators
	index      savedIndex
}

func (p *pass) loadState(ctx context.Context) error {
	get := func(name string) (string, error) { return p.cursor(ctx, name) }
	p.st = state{}
	st := &p.st
	st.tie = map[string]bool{}
	st.validators = map[string]validators{}
	var err error
	var v string
	if v, err = get(curChanges); err != nil {
		return err
	}
	if v != "" {
		if st.changes, err = resourcesync.ParseTime(v); err != nil {
			return fmt.Errorf("source %s: cursor %s %q: %w", p.src.Name, curChanges, v, err)
		}
	}
	if v, err = get(curTie); err != nil {
		return err
	}
	var t tie
	if v != "" && json.Unmarshal([]byte(v), &t) == nil && t.Time.Equal(st.changes) {
		for _, id := range t.IDs {
			st.tie[id] = true
		}
	}
	if v, err = get(curBaseline); err != nil {
		return err
	}
	if v != "" {
		st.baseline, _ = time.Parse(time.RFC3339Nano, v)
	}
	p.h.m.lag(p.src.Name, st.changes)
	if v, err = get(curValidators); err != nil {
		return err
	}
	if v != "" {
		_ = json.Unmarshal([]byte(v), &st.validators) // a bad value only costs a full GET
	}
	if v, err = get(curIndex); err != nil {
		return err
	}
	if v != "" {
		_ = json.Unmarshal([]byte(v), &st.index)
	}
	return nil
}

// set stores one cursor of the capability set being harvested, naming
// the Source in the error.
func (p *pass) set(ctx context.Context, name, value string) error {
	if p.cs != nil && p.cs.Key != "" {
		return p.setExtra(ctx, name, value)
	}
	if err := p.h.deps.Cursors.SetCursor(ctx, p.src.Name, name, value); err != nil {
		p.h.m.errors.WithLabelValues(p.src.Name, kindCatalog).Inc()
		return fmt.Errorf("source %s: set cursor %s: %w", p.src.Name, name, err)
	}
	return nil
}

func (p *pass) setJSON(ctx context.Context, name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("source %s: encode cursor %s: %w", p.src.Name, name, err)
	}
	return p.set(ctx, name, string(b))
}

// advance moves the change cursor to t, with ids the changes queued at t
// (merged with those already recorded when t is the current cursor). The
// tie is written first: it is only believed when its time equals the
// cursor's, so a crash between the writes loses nothing.
func (p *pass) advance(ctx context.Context, t time.Time, ids []string) error {
	if t.Before(p.st.changes) {
		return nil
	}
	if !t.Equal(p.st.changes) {
		p.st.tie = map[string]bool{}
	}
	for _, id := range ids {
		if len(p.st.tie) < maxTie {
			p.st.tie[id] = true
		}
	}
	all := make([]string, 0, len(p.st.tie))
	for id := range p.st.tie {
		all = append(all, id)
	}
	if err := p.setJSON(ctx, curTie, tie{Time: t, IDs: all}); err != nil {
		return err
	}
	if err := p.set(ctx, curChanges, t.UTC().Format(time.RFC3339Nano)); err != nil {
		return err
	}
	p.st.changes = t
	p.h.m.lag(p.src.Name, t)
	return nil
}

// CursorNames are the names of every cursor a pass or Push keeps for a
// Source: what a node carries over when it moves a Source's position from
// its catalog to the shared position bucket.
func CursorNames() []string {
	return []string{curCapabilities, curChanges, curTie, curBaseline, curValidators, curIndex, curSubscription, curNotified, curSets, curDescription}
}
