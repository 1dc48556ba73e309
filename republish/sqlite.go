package republish

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// SQLiteCatalog serves the republisher from the node's SQLite catalog.
// Lists stream from one snapshot each; single resources and stats are
// short reads on the catalog's other pool.
type SQLiteCatalog struct {
	cat *catalog.Catalog
}

var _ Catalog = (*SQLiteCatalog)(nil)

// FromSQLite returns the Catalog that New needs, reading cat. It owns
// nothing: closing cat is the caller's business.
func FromSQLite(cat *catalog.Catalog) *SQLiteCatalog { return &SQLiteCatalog{cat: cat} }

// Resources streams the held resources of collection after afterURI in
// URI order from one snapshot. fn gets the same *Record each time.
func (c *SQLiteCatalog) Resources(ctx context.Context, collection, afterURI string, limit int, fn func(*Record) error) error {
	var rec Record
	return c.cat.ScanResources(ctx, collection, afterURI, limit, func(rs *catalog.ResourceState) error {
		fromState(&rec, rs)
		return fn(&rec)
	})
}

// PlanResources cuts a Resource List into parts from the sizes the
// catalog keeps, without reading the resources, from one snapshot whose
// last applied sequence it returns.
func (c *SQLiteCatalog) PlanResources(ctx context.Context, collection string, maxEntries int, perRef, budget int64) ([]catalog.Cut, uint64, error) {
	return c.cat.PlanResources(ctx, collection, maxEntries, perRef, budget)
}

// LastApplied is the sequence of the last event the catalog applied,
// which moves with every change of it.
func (c *SQLiteCatalog) LastApplied(ctx context.Context) (uint64, error) {
	return c.cat.LastApplied(ctx)
}

var _ partPlanner = (*SQLiteCatalog)(nil)

// Changes streams the change log of collection for from <= time < until
// from one snapshot, each entry with the upstream change it came from.
// fn gets the same *Record each time.
func (c *SQLiteCatalog) Changes(ctx context.Context, collection string, from, until time.Time, fn func(*Record) error) error {
	var rec Record
	return c.cat.ScanChanges(ctx, collection, from, until, func(ch *catalog.LoggedChange) error {
		fromLogged(&rec, ch)
		return fn(&rec)
	})
}

// Resource finds the resource of collection whose origin URI is
// originURI, held or deleted.
func (c *SQLiteCatalog) Resource(ctx context.Context, collection, originURI string) (*Record, error) {
	rs, err := c.cat.ResourceByOrigin(ctx, collection, originURI)
	if errors.Is(err, catalog.ErrNotFound) {
		return nil, fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	if err != nil {
		return nil, err
	}
	rec := &Record{}
	fromState(rec, rs)
	return rec, nil
}

// Lookup finds every resource, of any collection, whose harvested or
// origin URI is uri.
func (c *SQLiteCatalog) Lookup(ctx context.Context, uri string) ([]*Record, error) {
	found, err := c.cat.ResourcesByURI(ctx, uri)
	if err != nil {
		return nil, err
	}
	out := make([]*Record, len(found))
	for i, rs := range found {
		out[i] = &Record{}
		fromState(out[i], rs)
	}
	return out, nil
}

// Stats reads the collection's counts and change-log bounds.
func (c *SQLiteCatalog) Stats(ctx context.Context, collection string) (Stats, error) {
	st, err := c.cat.CollectionStats(ctx, collection)
	if err != nil {
		return Stats{}, err
	}
	return Stats{Resources: st.Resources, Changes: st.Changes, First: st.First, Last: st.Last, Horizon: st.Horizon, Floor: st.Floor}, nil
}

// heldOp is the op a row's record carries: deleted for a deleted copy,
// else that of its last logged change, created when that was a deletion
// (the resource came back) or there is none.
func heldOp(rs *catalog.ResourceState) string {
	switch {
	case rs.Deleted:
		return resourcesync.Deleted
	case rs.Op == "" || rs.Op == resourcesync.Deleted:
		return resourcesync.Created
	}
	return rs.Op
}

// fromState fills rec from a resource row: the one conversion of the
// catalog's rows into records, for lists and single resources alike. It
// sets rec field by field, whatever rec held before, since copying a
// whole Record (three times and a dozen strings and slices) for each of a
// million rows of a list cost more than decoding the row, the garbage
// collector's write barrier being on for much of a list's life. The
// Source's op of the latest upstream statement is not kept per resource,
// so rec.Upstream.Op is empty.
func fromState(rec *Record, rs *catalog.ResourceState) {
	op := heldOp(rs)
	rec.Collection, rec.URI, rec.Op, rec.Seq, rec.At = rs.Collection, rs.URI, op, rs.Seq, rs.Changed
	rec.SHA256, rec.MD5, rec.Length, rec.Type = rs.SHA256, rs.MD5, rs.Length, rs.Type
	setUpstream(&rec.Upstream, rs.Source, rs.Collection, rs.URI, "", &rs.Upstream)
}

// fromLogged fills rec from a change-log row, field by field for the
// reason fromState gives: a Change List's first read copied a whole
// Record and a whole upstream change for each of its entries.
func fromLogged(rec *Record, ch *catalog.LoggedChange) {
	rec.Collection, rec.URI, rec.Op, rec.Seq, rec.At = ch.Collection, ch.URI, ch.Op, ch.Seq, ch.At
	rec.SHA256, rec.MD5, rec.Length, rec.Type = ch.SHA256, ch.MD5, ch.Length, ch.Type
	setUpstream(&rec.Upstream, ch.Source, ch.Collection, ch.URI, ch.UpstreamOp, &ch.Upstream)
}

// setUpstream sets every field of u to the upstream change the catalog
// recorded of the resource: its times, hashes and links.
func setUpstream(u *viaduct.Change, source, collection, uri, op string, up *catalog.Upstream) {
	u.Source, u.Collection, u.URI, u.Op = source, collection, uri, op
	u.Time, u.Listed, u.Modified = up.Time, time.Time{}, up.Modified
	u.Hash, u.Length, u.Type, u.Links = up.Hash, up.Length, up.Type, up.Links
	u.Doc, u.Blob, u.Fresh, u.Repair = "", nil, false, ""
}
