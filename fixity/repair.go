package fixity

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

// pendingRepair is a blob whose repair was asked: when, and for which
// resource of those whose copy it is, so that the audit can tell when
// the copy is back, or no longer needed.
type pendingRepair struct {
	asked      time.Time
	collection string
	uri        string
}

// followEvery is the least time between two looks at the pending repairs.
const followEvery = 5 * time.Second

// repair queues a repair change for each resource whose copy is h's blob
// (found by CopiesOf, h's own resource always among them) and records
// the blob as pending. The changes' ids depend on the resource and the
// key only, so a repair asked twice (the pass met the blob again, a
// restart) is queued once within the queue's duplicate window.
func (a *Audit) repair(ctx context.Context, h *catalog.HeldCopy, why string) error {
	copies, err := a.deps.Catalog.CopiesOf(ctx, a.deps.Sources, h.SHA256, h.MD5)
	if err != nil {
		return err
	}
	self := false
	for _, r := range copies {
		self = self || r.Collection == h.Collection && r.URI == h.URI
	}
	if !self {
		r, err := a.resource(ctx, h)
		if err != nil {
			return err
		}
		if r != nil {
			copies = append(copies, r)
		}
	}
	for _, r := range copies {
		if err := a.deps.Changes.PublishChange(ctx, repairChange(r, h.SHA256)); err != nil {
			return fmt.Errorf("fixity: queue the repair of %s (%s copy %s): %w", r.URI, why, h.SHA256, err)
		}
		a.m.repairs.Inc()
	}
	a.mu.Lock()
	a.bad++
	a.cur.Bad++
	a.pending[h.SHA256] = &pendingRepair{asked: a.deps.Now(), collection: h.Collection, uri: h.URI}
	a.m.pending.Set(float64(len(a.pending)))
	a.mu.Unlock()
	return nil
}

// resource reads h's own row, for a copy CopiesOf did not find (its
// Source neither configured nor recorded); nil when it is gone since.
func (a *Audit) resource(ctx context.Context, h *catalog.HeldCopy) (*catalog.Resource, error) {
	r, err := a.deps.Catalog.Resource(ctx, h.Collection, h.URI)
	if errors.Is(err, catalog.ErrNotFound) || err == nil && (r.Deleted || r.SHA256 != h.SHA256) {
		return nil, nil
	}
	return r, err
}

// repairChange is the change that asks the fetch workers for r's
// bitstream again: what the Source last said of it, as the catalog
// records it, so that the new copy is verified against the Source's
// declared digests and length as at ingest, marked as the repair of key.
func repairChange(r *catalog.Resource, key string) *viaduct.Change {
	up := &r.Upstream
	return &viaduct.Change{
		Source: r.Source, Collection: r.Collection, URI: r.URI, Op: resourcesync.Updated,
		Time: up.Time, Modified: up.Modified, Hash: up.Hash, Length: up.Length, Type: up.Type, Links: up.Links,
		Repair: key,
	}
}

// askAgainAfter is how long a repair may stay pending before the audit,
// meeting the blob still missing, asks for it again: a repair in flight
// (a Source slow to answer, a backlog on CHANGES) is not asked twice, one
// that was lost (its change dead-lettered and dropped) is.
const askAgainAfter = time.Hour

// repairing reports whether key is a blob this audit quarantined or
// found missing and asked to repair less than askAgainAfter ago: met
// again meanwhile (another resource with the same bytes, the next pass),
// it is neither counted nor asked again.
func (a *Audit) repairing(key string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	p := a.pending[key]
	return p != nil && a.deps.Now().Sub(p.asked) < askAgainAfter
}

// followRepairs looks, at most every followEvery, at the pending
// repairs: a blob back in the store is repaired; one no resource holds
// any more (the Source changed or deleted the resource meanwhile) is
// no longer needed. A repair that never comes back (the Source is gone,
// or serves other bytes under the same statement) stays pending, and
// its change is in the dead letters with the fetch worker's evidence.
func (a *Audit) followRepairs(ctx context.Context) {
	a.mu.Lock()
	if len(a.pending) == 0 || a.deps.Now().Sub(a.followed) < followEvery {
		a.mu.Unlock()
		return
	}
	a.followed = a.deps.Now()
	keys := make(map[string]pendingRepair, len(a.pending))
	for k, p := range a.pending {
		keys[k] = *p
	}
	a.mu.Unlock()
	for key, p := range keys {
		_, err := a.deps.Blobs.Stat(ctx, key)
		switch {
		case err == nil:
			a.log.InfoContext(ctx, "fixity: copy repaired", "sha256", key, "uri", p.uri, "took", a.deps.Now().Sub(p.asked).Round(time.Millisecond))
		case !errors.Is(err, storage.ErrNotFound):
			continue
		default:
			if held, err := a.stillHeld(ctx, key, &p); err != nil || held {
				continue
			}
			a.log.InfoContext(ctx, "fixity: a pending repair is no longer needed: no resource holds the copy now", "sha256", key, "uri", p.uri)
		}
		a.mu.Lock()
		delete(a.pending, key)
		a.m.pending.Set(float64(len(a.pending)))
		a.mu.Unlock()
	}
}

// stillHeld reports whether the resource the repair was asked for still
// holds the copy key.
func (a *Audit) stillHeld(ctx context.Context, key string, p *pendingRepair) (bool, error) {
	r, err := a.deps.Catalog.Resource(ctx, p.collection, p.uri)
	if errors.Is(err, catalog.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return !r.Deleted && r.SHA256 == key, nil
}
