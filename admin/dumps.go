package admin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/viaduct-mirror/viaduct/republish"
)

// RebuildAnswer is what a request to rebuild a collection's Dumps is told.
type RebuildAnswer struct {
	Collection string `json:"collection"`
	// Joined is true when a rebuild of the collection was already under
	// way and the request joined it.
	Joined bool   `json:"joined"`
	State  string `json:"state"` // started, done or failed
	Error  string `json:"error,omitempty"`
}

// rebuildDumps answers POST /admin/dumps/{collection}: one rebuild at a
// time per collection, later requests join it; 202 at once, or with
// ?wait=true the rebuild's result.
func (s *Server) rebuildDumps(w http.ResponseWriter, r *http.Request) {
	coll := r.PathValue("collection")
	if s.deps.Dumps == nil {
		writeError(w, fmt.Errorf("dumps of %q: republish.dumps.enabled is off: %w", coll, errUnavailable))
		return
	}
	ctx := context.WithoutCancel(r.Context())
	j, joined := s.dumps.do(ctx, coll, func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, requestTimeout)
		defer cancel()
		err := s.deps.Dumps.Rebuild(ctx, coll)
		if err != nil {
			s.log.Error("dump rebuild failed", "collection", coll, "err", err)
		}
		return err
	})
	s.log.Info("dump rebuild asked for", "collection", coll, "joined", joined, "remote", r.RemoteAddr)
	ans := RebuildAnswer{Collection: coll, Joined: joined, State: "started"}
	if wait, _ := strconv.ParseBool(r.URL.Query().Get("wait")); !wait {
		writeJSON(w, http.StatusAccepted, ans)
		return
	}
	select {
	case <-j.done:
	case <-r.Context().Done():
		return
	}
	if j.err != nil {
		if errors.Is(j.err, republish.ErrNotFound) {
			writeError(w, fmt.Errorf("collection %q: %w", coll, errNotFound))
			return
		}
		ans.State, ans.Error = "failed", j.err.Error()
		writeJSON(w, http.StatusInternalServerError, ans)
		return
	}
	ans.State = "done"
	writeJSON(w, http.StatusOK, ans)
}

// reload answers POST /admin/reload, as SIGHUP does.
func (s *Server) reload(w http.ResponseWriter, r *http.Request) {
	if s.deps.Reload == nil {
		writeError(w, fmt.Errorf("reload: %w", errUnavailable))
		return
	}
	res, err := s.deps.Reload(r.Context())
	if err != nil {
		writeError(w, fmt.Errorf("reload: %w: %w", err, errBadRequest))
		return
	}
	writeJSON(w, http.StatusOK, res)
}
