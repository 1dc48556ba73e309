package harvester

import (
	"context"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// States of a Source in its status.
const (
	StateHarvesting = "harvesting"
	StateIdle       = "idle"
	StateFailing    = "failing"
)

// SourceStatus is what an operator sees of one Source.
type SourceStatus struct {
	Name       string `json:"name"`
	URL        string `json:"url"`
	Collection string `json:"collection"`
	Schedule   string `json:"schedule"`
	// State is harvesting (a pass is under way), failing (the last pass
	// failed) or idle.
	State string `json:"state"`
	// RunningSince is when the pass under way started.
	RunningSince time.Time `json:"running_since,omitzero"`
	Rebaselining bool      `json:"rebaselining,omitempty"`
	// Pending is true when a pass has been asked for and waits to start.
	Pending bool `json:"pending,omitempty"`
	// LeasedBy is the node that holds the Source's lease when harvesters
	// share Sources; empty on a node that harvests every Source itself.
	LeasedBy string `json:"leased_by,omitempty"`
	// Push is true while the Source is followed by its change
	// notifications (its subscription is active): it is then polled only
	// on the push schedule, and LastNotified, not the last pass, says when
	// it was last heard from.
	Push         bool      `json:"push,omitempty"`
	LastNotified time.Time `json:"last_notified,omitzero"`
	// LastPass is the last pass that ended, LastSuccess when the last
	// successful one ended, LastError the last that failed.
	LastPass    *PassRecord `json:"last_pass,omitempty"`
	LastSuccess time.Time   `json:"last_success,omitzero"`
	LastError   *PassRecord `json:"last_error,omitempty"`
	// Cursor is the Source's own time of the last change queued (or the
	// at of its last baseline); CursorLag how far it is behind now.
	Cursor    time.Time     `json:"cursor,omitzero"`
	CursorLag time.Duration `json:"cursor_lag_ns,omitempty"`
	// Baseline is when (local clock) its last baseline completed.
	Baseline time.Time `json:"baseline,omitzero"`
	// Recent are its last passes, oldest first.
	Recent []PassRecord `json:"recent,omitempty"`
	// Warnings are the documents the last pass read although the Source
	// should not write them so (out of order, several Capability Lists,
	// paged...), each once with its kind and how many entries it
	// concerned.
	Warnings []Warning `json:"warnings,omitempty"`
	// Gaps are the last times the Source's Change Lists no longer reached
	// back to the cursor, oldest first, and how each was closed.
	Gaps []Gap `json:"gaps,omitempty"`
}

// Status reports every configured Source, in configuration order. The
// cursors are read through Deps.Cursors; a cursor that cannot be read is
// left zero.
func (h *Harvester) Status(ctx context.Context) []SourceStatus {
	srcs := h.sourceList()
	out := make([]SourceStatus, 0, len(srcs))
	for _, s := range srcs {
		out = append(out, h.status(ctx, s))
	}
	return out
}

// SourceStatus reports one Source.
func (h *Harvester) SourceStatus(ctx context.Context, name string) (SourceStatus, bool) {
	s, ok := h.source(name)
	if !ok {
		return SourceStatus{}, false
	}
	return h.status(ctx, s), true
}

func (h *Harvester) status(ctx context.Context, s *source) SourceStatus {
	st := SourceStatus{Name: s.Name, URL: s.URL, Collection: s.Collection, Schedule: s.Schedule, State: StateIdle}
	h.ctl.mu.Lock()
	t := h.ctl.track(s.Name)
	st.Pending = t.pending != nil
	st.LastSuccess = t.lastSuccess
	if t.last != nil {
		l := *t.last
		st.LastPass = &l
		if l.Error != "" {
			st.State = StateFailing
		}
	}
	if t.lastError != nil {
		e := *t.lastError
		st.LastError = &e
	}
	if t.running {
		st.State, st.RunningSince, st.Rebaselining = StateHarvesting, t.runningSince, t.rebaselining
	}
	st.Recent = append([]PassRecord(nil), t.recent...)
	st.Warnings = append([]Warning(nil), t.warnings...)
	st.Gaps = append([]Gap(nil), t.gaps...)
	h.ctl.mu.Unlock()
	if p := h.pushing(); p != nil {
		st.Push, st.LastNotified = p.following(s.Name)
	}

	if v, err := h.deps.Cursors.Cursor(ctx, s.Name, curChanges); err == nil && v != "" {
		if c, err := resourcesync.ParseTime(v); err == nil {
			st.Cursor, st.CursorLag = c, time.Since(c)
		}
	}
	if v, err := h.deps.Cursors.Cursor(ctx, s.Name, curBaseline); err == nil && v != "" {
		st.Baseline, _ = time.Parse(time.RFC3339Nano, v)
	}
	return st
}
