package republish

import (
	"net/http"
)

// currentName is the file name of the current Change List's stable URL.
const currentName = "current.xml"

// capabilityChangeListURL is what the Capability List names as the
// collection's changelist: the Change List Index, or the current Change
// List when the configuration asks for it (CapabilityCurrent).
func (s *Server) capabilityChangeListURL(coll string) string {
	if s.cfg.CapabilityChangeList == CapabilityCurrent {
		return s.url("/" + coll + "/changelist/" + currentName)
	}
	return s.changeListIndexURL(coll)
}

// serveCurrentChangeList serves, at a URL that does not change, the
// Change List holding the collection's latest changes: the last piece of
// the open period, the same document its own URL serves. A client that
// cannot read an index (the Python resync client) finds it through the
// Capability List and syncs incrementally from it, as long as it comes
// back before the list it last read is closed (docs/republish.md).
func (s *Server) serveCurrentChangeList(w http.ResponseWriter, r *http.Request, c *Collection) {
	ctx := r.Context()
	st, err := s.cat.Stats(ctx, c.Name)
	if err != nil {
		s.fail(w, r, "changelist", err)
		return
	}
	_, open := s.periods(st)
	ps, err := s.pieces(ctx, c.Name, open, st, false)
	if err != nil {
		s.fail(w, r, "changelist", err)
		return
	}
	last := ps[len(ps)-1]
	s.serveChangeList(w, r, c, pieceName(open, last)+".xml")
}
