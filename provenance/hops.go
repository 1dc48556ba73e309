package provenance

import (
	"strings"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// Roles of a hop in a provenance chain.
const (
	RoleOrigin     = "origin"
	RoleAggregator = "aggregator"
	RoleSelf       = "self"
)

// Hop is one place a resource passed through on its way to this
// aggregator, with what that place said about it.
type Hop struct {
	Role string `json:"role"`
	URI  string `json:"uri"`
	// Source names the configured upstream Source, for the hop read
	// directly from it.
	Source string `json:"source,omitempty"`
	// Modified is the resource's time at that hop: the origin's lastmod,
	// the upstream's change time, or this aggregator's change time.
	Modified time.Time           `json:"modified,omitzero"`
	Hash     resourcesync.Hashes `json:"hash,omitempty"`
	Length   *int64              `json:"length,omitempty"`
	Type     string              `json:"type,omitempty"`
}

// Hops returns the chain origin -> upstream aggregator -> self for the
// upstream change up and this aggregator's own hop: the Upstream chain with
// self, in the role RoleSelf, at its end.
func Hops(up *viaduct.Change, self Hop) []Hop {
	self.Role = RoleSelf
	return append(Upstream(up), self)
}

// Upstream returns the chain up to the Source the change up was read from,
// for the catalog to keep and the republisher to serve alike. When the
// upstream entry carries a via link naming another resource, the upstream
// is an aggregator and the via link names the origin; aggregators between
// the origin and the upstream are not visible in ResourceSync documents
// (each keeps only the via link), so the chain is then origin, aggregator.
// Without such a link the upstream is the origin and the chain has one hop.
func Upstream(up *viaduct.Change) []Hop {
	direct := Hop{
		URI:      up.URI,
		Source:   up.Source,
		Modified: up.Modified,
		Hash:     up.Hash,
		Length:   up.Length,
		Type:     up.Type,
	}
	for _, l := range up.Links {
		if !strings.EqualFold(l.Rel, "via") || l.Href == "" || l.Href == up.URI {
			continue
		}
		origin := Hop{Role: RoleOrigin, URI: l.Href, Modified: l.Modified, Hash: l.Hash, Length: l.Length, Type: l.Type}
		direct.Role = RoleAggregator
		if direct.Modified.IsZero() {
			direct.Modified = up.Time
		}
		return append(make([]Hop, 0, 3), origin, direct) // room for Hops' self
	}
	direct.Role = RoleOrigin
	return append(make([]Hop, 0, 2), direct)
}

// OriginURI is the URI of the resource at its origin: the href of the
// upstream's via link, or the upstream URI itself.
func OriginURI(up *viaduct.Change) string {
	return Via(up).Href
}
