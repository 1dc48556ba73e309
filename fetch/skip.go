package fetch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/storage"
)

// Reasons a change is handled without fetching its bitstream.
const (
	skipHeld       = "held"            // the catalog holds this URI with this content: a replay
	skipSuperseded = "superseded"      // the catalog has a later change of this URI
	skipRefresh    = "held_refresh"    // same content, newer upstream metadata: event, no fetch
	skipBlobExists = "blob_exists"     // the declared sha-256 is already a blob
	skipHeldByHash = "held_by_hash"    // the catalog holds a copy with the declared hash
	skipNotHeld    = "not_held"        // deleting what was never held: an event all the same
	skipGone       = "already_deleted" // the catalog has this deletion, or a later one
)

// skip looks for a reason not to fetch a created or updated resource:
// the node already has its bytes. It returns the event to publish (nil for
// none) and the reason, or "" when the bitstream must be fetched. A
// fresh change (see viaduct.Change.Fresh) is not looked up in the catalog.
func (p *Pool) skip(ctx context.Context, c *viaduct.Change, fresh bool) (*viaduct.Event, string, error) {
	if p.deps.Catalog != nil && !fresh {
		l, found, err := p.deps.Catalog.Lookup(ctx, c.Collection, c.URI)
		switch {
		case err != nil:
			return nil, "", fmt.Errorf("look up %s in the catalog: %w", c.URI, err)
		case !found:
		case superseded(c, &l):
			return nil, skipSuperseded, nil
		case !l.Deleted && sameContent(c, &l):
			if t := orderOf(c); !t.IsZero() && t.After(l.UpstreamTime) {
				// A new change that did not change the bytes: the
				// catalog records the Source's new metadata.
				return newEvent(c, l.SHA256, l.MD5, l.Length, typeOr(c.Type, l.Type)), skipRefresh, nil
			}
			return nil, skipHeld, nil
		}
	}
	if ev, reason, err := p.stored(ctx, c); err != nil || reason != "" {
		return ev, reason, err
	}
	if sha := c.Hash.Get(resourcesync.SHA256); sha != "" {
		info, err := storage.Touch(ctx, p.deps.Blobs, sha) // touched: see storage.Sweeper
		switch {
		case errors.Is(err, storage.ErrNotFound):
			// A copy held by hash would be this very blob (its sha-256
			// must equal the declared one), which is not in the store:
			// the catalog has nothing to offer, so it is not asked.
			return nil, "", nil
		case err != nil:
			return nil, "", fmt.Errorf("look up blob %s: %w", sha, err)
		case c.Length == nil || info.Size == *c.Length:
			// The md5 is the one computed of this blob: the catalog's
			// (found by the declared md5, the one digest it indexes),
			// else computed now (blobMD5); a declared one is not trusted
			// unverified, and an event without one would lose the md5
			// the Source declared (a worker that died between storing
			// the blob and publishing left exactly this).
			md5, typ := "", c.Type
			if r, err := p.heldByHash(ctx, c, fresh); err == nil && r.SHA256 == sha {
				md5, typ = r.MD5, typeOr(c.Type, r.Type)
			}
			if md5 == "" {
				if md5, err = p.blobMD5(ctx, sha, info.Size); err != nil {
					p.log.Warn("stored blob unreadable or not what its key says; fetching the bitstream again", "source", c.Source, "uri", c.URI, "sha256", sha, "err", err)
					return nil, "", nil
				}
			}
			return newEvent(c, sha, md5, info.Size, typ), skipBlobExists, nil
		}
	}
	r, err := p.heldByHash(ctx, c, fresh)
	if err != nil || c.Hash.Verify(ownHashes(r.MD5, r.SHA256)) != nil {
		return nil, "", nil
	}
	if _, err := storage.Touch(ctx, p.deps.Blobs, r.SHA256); err != nil {
		return nil, "", nil // the catalog's copy is gone from the store: fetch it again
	}
	md5 := r.MD5
	if md5 == "" {
		if md5, err = p.blobMD5(ctx, r.SHA256, r.Length); err != nil {
			return nil, "", nil
		}
	}
	return newEvent(c, r.SHA256, md5, r.Length, typeOr(c.Type, r.Type)), skipHeldByHash, nil
}

// heldByHash asks the catalog, if there is one, for a copy of the Source
// with the declared hash and length.
func (p *Pool) heldByHash(ctx context.Context, c *viaduct.Change, fresh bool) (*catalog.Lookup, error) {
	if p.deps.Catalog == nil || fresh {
		return nil, catalog.ErrNotFound
	}
	return p.deps.Catalog.HeldByHash(ctx, c.Source, c.Hash, c.Length)
}

// deleted handles a deletion: an event, always, so that the catalog of
// every node records it even when the creation it follows has not been
// applied yet (the catalog orders the two by the Source's times). It
// carries the hashes of the copy the catalog has, when it has one. The
// only deletions acked without an event are those the catalog would
// ignore anyway: one older than its record of the URI, or a repeat of the
// deletion it already has.
func (p *Pool) deleted(ctx context.Context, c *viaduct.Change) (*viaduct.Event, string, error) {
	if p.deps.Catalog == nil {
		return newEvent(c, "", "", 0, ""), "", nil
	}
	l, found, err := p.deps.Catalog.Lookup(ctx, c.Collection, c.URI)
	switch {
	case err != nil:
		return nil, "", fmt.Errorf("look up %s in the catalog: %w", c.URI, err)
	case !found:
		return newEvent(c, "", "", 0, ""), skipNotHeld, nil
	case superseded(c, &l):
		return nil, skipSuperseded, nil
	case l.Deleted && !orderOf(c).After(l.UpstreamTime):
		return nil, skipGone, nil
	}
	return newEvent(c, l.SHA256, l.MD5, l.Length, l.Type), "", nil
}

// superseded reports whether the catalog already has a later statement
// of the Source about the resource than c: the catalog would ignore c's
// event (it places c before the row's order, see catalog.ApplyBatch), and
// its bitstream is no longer what c describes. It is only a shortcut: the
// catalog decides the same on every node, from the events.
func superseded(c *viaduct.Change, l *catalog.Lookup) bool {
	t := orderOf(c)
	return !t.IsZero() && l.Order.After(t)
}

// orderOf is the Source time that places c among the statements about its
// resource, as the catalog orders them: the later of its time and, for a
// baseline, its list's at.
func orderOf(c *viaduct.Change) time.Time {
	if c.Listed.After(c.Time) {
		return c.Listed
	}
	return c.Time
}

// sameContent reports whether what the Source declared agrees with the
// held copy: at least one declared digest the catalog keeps (md5,
// sha-256), all of them equal, the length if declared, the type if declared.
func sameContent(c *viaduct.Change, l *catalog.Lookup) bool {
	if c.Hash.Get(resourcesync.SHA256) == "" && c.Hash.Get(resourcesync.MD5) == "" {
		return false
	}
	if c.Hash.Verify(ownHashes(l.MD5, l.SHA256)) != nil {
		return false
	}
	if c.Length != nil && *c.Length != l.Length {
		return false
	}
	return c.Type == "" || c.Type == l.Type
}

// ownHashes are the digests the catalog computed of its copy.
func ownHashes(md5, sha256 string) resourcesync.Hashes {
	var hs resourcesync.Hashes
	if md5 != "" {
		hs = append(hs, resourcesync.Hash{Alg: resourcesync.MD5, Value: md5})
	}
	if sha256 != "" {
		hs = append(hs, resourcesync.Hash{Alg: resourcesync.SHA256, Value: sha256})
	}
	return hs
}

func typeOr(declared, held string) string {
	if declared != "" {
		return declared
	}
	return held
}

// newEvent is the event recording the aggregator's copy of c.
func newEvent(c *viaduct.Change, sha256, md5 string, length int64, typ string) *viaduct.Event {
	return &viaduct.Event{
		Source: c.Source, Collection: c.Collection, URI: c.URI, Op: c.Op,
		SHA256: sha256, MD5: md5, Length: length, Type: typ,
		Upstream: *c,
	}
}
