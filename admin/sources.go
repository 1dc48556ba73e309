package admin

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/viaduct-mirror/viaduct/harvester"
)

// SourceView is one Source as the API and the page show it: its status
// and its counts since the node started.
type SourceView struct {
	harvester.SourceStatus
	// Queued are the changes the harvester queued; Fetched the bitstreams
	// fetched and stored; Failed the changes dead-lettered. Counted since
	// the node started, from its metrics.
	Queued  uint64 `json:"changes_queued"`
	Fetched uint64 `json:"changes_fetched"`
	Failed  uint64 `json:"changes_failed"`
	// DeadLetters are the Source's dead letters waiting now.
	DeadLetters uint64 `json:"dead_letters"`
}

// sources builds the views of every Source.
func (s *Server) sources(ctx context.Context) []SourceView {
	sts := s.deps.Harvester.Status(ctx)
	counts := s.sourceCounts()
	dead, _ := s.deps.DeadLetters.DeadLetterCounts(ctx)
	out := make([]SourceView, 0, len(sts))
	for _, st := range sts {
		c := counts[st.Name]
		out = append(out, SourceView{SourceStatus: st, Queued: c.queued, Fetched: c.fetched, Failed: c.failed, DeadLetters: dead[st.Name]})
	}
	return out
}

func (s *Server) listSources(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.sources(r.Context()))
}

func (s *Server) showSource(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("source")
	for _, v := range s.sources(r.Context()) {
		if v.Name == name {
			writeJSON(w, http.StatusOK, v)
			return
		}
	}
	writeError(w, fmt.Errorf("source %q: %w", name, harvester.ErrNoSource))
}

// syncAnswer is what a sync or re-baseline request is told.
type syncAnswer struct {
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
		ans := syncAnswer{Source: name, Rebaseline: rebaseline, Merged: merged, State: "queued"}
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
