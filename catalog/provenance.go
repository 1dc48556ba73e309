package catalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/provenance"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// Roles of a Hop, those of package provenance.
const (
	// RoleOrigin is the Source where the resource was first published.
	RoleOrigin = provenance.RoleOrigin
	// RoleAggregator is a copy along the way: an upstream aggregator, or
	// this one as the last hop.
	RoleAggregator = provenance.RoleAggregator
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

// upstreamHops is the chain up to the Source the event came from, as
// provenance.Upstream builds it (origin, then the upstream when it is an
// aggregator), in the fields the catalog keeps.
func upstreamHops(ev *viaduct.Event) []Hop {
	chain := provenance.Upstream(&ev.Upstream)
	out := make([]Hop, len(chain))
	for i, h := range chain {
		out[i] = Hop{URI: h.URI, Role: h.Role, Modified: h.Modified, Hash: h.Hash, Length: h.Length}
	}
	return out
}

// hopsOf is the chain of hops, as JSON, of a resource row at uri whose
// hops column is NULL: the one upstreamHops builds of the Source's word
// its up_pack keeps (see upstreamOf), with the row's copy (sha256, md5,
// type) that the pack's marks name.
func hopsOf(uri, upPack, sha256, md5, typ string) (string, error) {
	var source, origin string
	var up Upstream
	if err := decodeUp(upPack, uri, sha256, md5, typ, &source, &origin, &up); err != nil {
		return "", err
	}
	ev := viaduct.Event{Source: source, URI: uri, Upstream: viaduct.Change{Source: source, URI: uri,
		Time: up.Time, Modified: up.Modified, Hash: up.Hash, Length: up.Length, Type: up.Type, Links: up.Links}}
	b, err := json.Marshal(upstreamHops(&ev))
	if err != nil {
		return "", fmt.Errorf("encode provenance: %w", err)
	}
	return string(b), nil
}

// provenanceSQL finds the resource known by ?1, harvested or origin URI
// (byURIOrOrigin).
var provenanceSQL = `SELECT collection, uri, coalesce(hops, ''), up_pack, sha256, md5, type, length, changed
	FROM resources WHERE ` + byURIOrOrigin + ` AND ` + heldOnce + `
	ORDER BY uri = ?1 DESC, deleted, changed DESC LIMIT 1`

// Provenance returns the chain of hops of the resource known by uri, from
// the origin to this aggregator. uri may be the resource's URI at the
// Source it was harvested from or at its origin. When several resources
// match (the same origin reached through two aggregators), an exact match
// on the harvested URI wins, then a resource still held, then the most
// recently changed. ErrNotFound if none matches.
func (c *Catalog) Provenance(ctx context.Context, uri string) ([]Hop, error) {
	var (
		coll, at, hopsJSON, up, sha, md5, typ string
		length, changed                       int64
	)
	err := c.reader.QueryRowContext(ctx, provenanceSQL, uri).
		Scan(&coll, &at, &hopsJSON, &up, hexDigest{&sha}, hexDigest{&md5}, &typ, &length, &changed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("provenance of %s: %w", uri, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("provenance of %s: %w", uri, err)
	}
	if hopsJSON == "" {
		if hopsJSON, err = hopsOf(at, up, sha, md5, typ); err != nil {
			return nil, fmt.Errorf("provenance of %s: %w", uri, err)
		}
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
