package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// Roles of a Hop.
const (
	// RoleOrigin is the Source where the resource was first published.
	RoleOrigin = "origin"
	// RoleAggregator is a copy along the way: an upstream aggregator, or
	// this one as the last hop.
	RoleAggregator = "aggregator"
)

// Hop is one place a resource passed through on its way here, with what
// that place said of its copy.
type Hop struct {
	// URI is the resource's URI at that hop; empty for this aggregator,
	// whose URI the republisher derives from Collection and the origin.
	URI string `json:"uri"`
	// Collection is set on this aggregator's hop only.
	Collection string              `json:"collection,omitempty"`
	Role       string              `json:"role"`
	Modified   time.Time           `json:"modified,omitzero"`
	Hash       resourcesync.Hashes `json:"hash,omitempty"`
	Length     *int64              `json:"length,omitempty"`
}

// upstreamHops is the chain up to the Source the event came from: the
// origin (the href of the upstream's rel="via" link if it has one, else the
// upstream itself), then the upstream when it is an aggregator. A via link
// names the origin, not the aggregators in between, so those are unknown.
func upstreamHops(ev *viaduct.Event) []Hop {
	up := &ev.Upstream
	self := Hop{URI: ev.URI, Role: RoleOrigin, Modified: up.Modified, Hash: up.Hash, Length: up.Length}
	for _, l := range up.Links {
		if l.Rel != "via" || l.Href == "" || l.Href == ev.URI {
			continue
		}
		self.Role = RoleAggregator
		origin := Hop{URI: l.Href, Role: RoleOrigin, Modified: l.Modified, Hash: l.Hash, Length: l.Length}
		return []Hop{origin, self}
	}
	return []Hop{self}
}

// Provenance returns the chain of hops of the resource known by uri, from
// the origin to this aggregator. uri may be the resource's URI at the
// Source it was harvested from or at its origin. When several resources
// match (the same origin reached through two aggregators), an exact match
// on the harvested URI wins, then a resource still held, then the most
// recently changed. ErrNotFound if none matches.
func (c *Catalog) Provenance(ctx context.Context, uri string) ([]Hop, error) {
	var (
		coll, hopsJSON, sha, md5 string
		length, changed          int64
	)
	err := c.reader.QueryRowContext(ctx, `SELECT collection, hops, sha256, md5, length, changed
		FROM resources WHERE (uri = ?1 OR origin = ?1) AND `+heldOnce+`
		ORDER BY uri = ?1 DESC, deleted, changed DESC LIMIT 1`, uri).
		Scan(&coll, &hopsJSON, &sha, &md5, &length, &changed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("provenance of %s: %w", uri, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("provenance of %s: %w", uri, err)
	}
	var hops []Hop
	if err := json.Unmarshal([]byte(hopsJSON), &hops); err != nil {
		return nil, fmt.Errorf("provenance of %s: decode hops: %w", uri, err)
	}
	here := Hop{Collection: coll, Role: RoleAggregator, Modified: time.UnixMicro(changed).UTC(), Length: &length}
	here.Hash = append(here.Hash, resourcesync.Hash{Alg: resourcesync.SHA256, Value: sha})
	if md5 != "" {
		here.Hash = append(here.Hash, resourcesync.Hash{Alg: resourcesync.MD5, Value: md5})
	}
	return append(hops, here), nil
}
