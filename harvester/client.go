package harvester

import "github.com/viaduct-mirror/viaduct/upstream"

// Client returns the upstream client of the named Source, under that
// Source's Policy, or nil when no such Source is configured. Fetch workers
// take their clients from here, so bitstreams are fetched under exactly the
// confinement the Source's documents are.
func (h *Harvester) Client(name string) *upstream.Client {
	s, ok := h.source(name)
	if !ok {
		return nil
	}
	return s.client
}
