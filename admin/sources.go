package admin

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/viaduct-mirror/viaduct/harvester"
)

// SourceView is one Source as the API and the page show it: its status
// and its counts since the node started. Its JSON is what scripts read
// (`viaduct admin -o json sources`): fields are added, never renamed, and
// durations are strings such as "9.076s".
type SourceView struct {
	Name       string `json:"name"`
	URL        string `json:"url"`
	Collection string `json:"collection"`
	Schedule   string `json:"schedule"`
	// State is harvesting (a pass is under way), failing (the last pass
	// failed) or idle.
	State        string    `json:"state"`
	RunningSince time.Time `json:"running_since,omitzero"`
	Rebaselining bool      `json:"rebaselining,omitempty"`
	// Pending is true when a pass has been asked for and waits to start.
	Pending bool `json:"pending,omitempty"`
	// LeasedBy is the node holding the Source's lease when harvesters
	// share Sources.
	LeasedBy string `json:"leased_by,omitempty"`
	// Push is true while the Source is followed by its change
	// notifications; LastNotified is when the last one came. A push
	// Source is last heard from at LastNotified, a polled one at its last
	// pass.
	Push         bool      `json:"push,omitempty"`
	LastNotified time.Time `json:"last_notified,omitzero"`
	// LastPass is the last pass that ended, LastSuccess when the last
	// successful one ended, LastError the last that failed, its error in
	// full.
	LastPass    *harvester.PassRecord `json:"last_pass,omitempty"`
	LastSuccess time.Time             `json:"last_success,omitzero"`
	LastError   *harvester.PassRecord `json:"last_error,omitempty"`
	// Cursor is the Source's own time of the last change queued (or the
	// at of its last baseline); CursorLag how far it is behind now.
	Cursor    time.Time `json:"cursor,omitzero"`
	CursorLag Duration  `json:"cursor_lag,omitzero"`
	// Baseline is when (local clock) its last baseline completed.
	Baseline time.Time `json:"baseline,omitzero"`
	// Recent are its last passes, oldest first.
	Recent []harvester.PassRecord `json:"recent,omitempty"`
	// Queued are the changes the harvester queued; Fetched the bitstreams
	// fetched and stored; Failed the changes dead-lettered. Counted since
	// the node started, from its metrics.
	Queued  uint64 `json:"changes_queued"`
	Fetched uint64 `json:"changes_fetched"`
	Failed  uint64 `json:"changes_failed"`
	// DeadLetters are the Source's dead letters waiting now.
	DeadLetters uint64 `json:"dead_letters"`
	// Warnings are what the last pass read although the Source wrote it
	// its own way (docs/validation.md); Gaps the last times its Change
	// Lists no longer reached back to the cursor, and how each was closed.
	Warnings []harvester.Warning `json:"warnings,omitempty"`
	Gaps     []harvester.Gap     `json:"gaps,omitempty"`
}

// viewSource is st with its counts.
func viewSource(st harvester.SourceStatus, c sourceCount, dead uint64) SourceView {
	return SourceView{Name: st.Name, URL: st.URL, Collection: st.Collection, Schedule: st.Schedule,
		State: st.State, RunningSince: st.RunningSince, Rebaselining: st.Rebaselining, Pending: st.Pending, LeasedBy: st.LeasedBy,
		Push: st.Push, LastNotified: st.LastNotified,
		LastPass: st.LastPass, LastSuccess: st.LastSuccess, LastError: st.LastError,
		Cursor: st.Cursor, CursorLag: Duration(st.CursorLag), Baseline: st.Baseline, Recent: st.Recent,
		Queued: c.queued, Fetched: c.fetched, Failed: c.failed, DeadLetters: dead,
		Warnings: st.Warnings, Gaps: st.Gaps}
}

// sources builds the views of every Source.
func (s *Server) sources(ctx context.Context) []SourceView {
	sts := s.deps.Harvester.Status(ctx)
	counts := s.sourceCounts()
	dead, _ := s.deps.DeadLetters.DeadLetterCounts(ctx)
	out := make([]SourceView, 0, len(sts))
	for _, st := range sts {
		out = append(out, viewSource(st, counts[st.Name], dead[st.Name]))
	}
	return out
}

func (s *Server) listSources(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.sources(r.Context()))
}

func (s *Server) showSource(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("source")
	st, ok := s.deps.Harvester.SourceStatus(r.Context(), name)
	if !ok {
		writeError(w, fmt.Errorf("source %q: %w", name, harvester.ErrNoSource))
		return
	}
	dead, _ := s.deps.DeadLetters.DeadLetterCounts(r.Context())
	writeJSON(w, http.StatusOK, viewSource(st, s.sourceCounts()[name], dead[name]))
}

// SyncAnswer is what a sync or re-baseline request is told.
type SyncAnswer struct {
	Source     string `json:"source"`
	Rebaseline bool   `json:"rebaseline"`
	// Merged is true when the request joined a pass already asked for
	// and not yet started.
	Merged bool `json:"merged"`
	// State is "queued" (the pass starts as soon as the Source is free),
	// or, with ?wait=true, "done" or "failed".
	State string `json:"state"`
	Error string `json:"error,omitempty"`
}

// syncSource asks for a pass (or a re-baseline) and answers 202 at once;
// with ?wait=true it answers when the pass has ended: 200, or 502 with
// the pass's error.
func (s *Server) syncSource(rebaseline bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("source")
		req, merged, err := s.deps.Harvester.Trigger(name, rebaseline)
		if err != nil {
			writeError(w, err)
			return
		}
		s.log.Info("pass asked for", "source", name, "rebaseline", rebaseline, "merged", merged, "remote", r.RemoteAddr)
		ans := SyncAnswer{Source: name, Rebaseline: rebaseline, Merged: merged, State: "queued"}
		if wait, _ := strconv.ParseBool(r.URL.Query().Get("wait")); !wait {
			writeJSON(w, http.StatusAccepted, ans)
			return
		}
		select {
		case <-req.Done():
		case <-r.Context().Done():
			return
		}
		if err := req.Err(); err != nil {
			ans.State, ans.Error = "failed", err.Error()
			writeJSON(w, http.StatusBadGateway, ans)
			return
		}
		ans.State = "done"
		writeJSON(w, http.StatusOK, ans)
	}
}
