package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Resource is the catalog's row for one resource of a collection: the
// aggregator's copy and what its Source last said about it.
type Resource struct {
	Collection string
	// URI is the resource's URI at the Source it was harvested from.
	URI    string
	Source string
	// Origin is its URI at the origin: the upstream's via link, else URI.
	Origin string
	// Deleted is set once the aggregator has deleted its copy; the hashes
	// are then those of the last copy held. A row that is Deleted with
	// Seq 0 and no hashes is a tombstone: the Source deleted a resource
	// the aggregator never held (see ApplyBatch).
	Deleted bool
	SHA256  string
	MD5     string
	Length  int64
	Type    string
	// Changed is the aggregator's time of its last change to the copy, as
	// in the change log; Seq is that change's EVENTS sequence.
	Changed  time.Time
	Seq      uint64
	Upstream Upstream
}

// resourceCols is the column list scanResource reads, in its order.
// The Source's word (source, origin, upstream) is read from up_pack.
const resourceCols = `collection, uri, deleted, sha256, md5, length, type, changed, seq, up_pack`

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(...any) error }

// scanResource reads one row of resourceCols.
func scanResource(s scanner) (*Resource, error) {
	var (
		r            Resource
		deleted      bool
		changed, seq int64
		up           string
	)
	err := s.Scan(&r.Collection, &r.URI, &deleted, hexDigest{&r.SHA256}, hexDigest{&r.MD5}, &r.Length, &r.Type, &changed, &seq, &up)
	if err != nil {
		return nil, err
	}
	r.Deleted, r.Changed, r.Seq = deleted, time.UnixMicro(changed).UTC(), uint64(seq)
	if err := decodeUp(up, r.URI, r.SHA256, r.MD5, r.Type, &r.Source, &r.Origin, &r.Upstream); err != nil {
		return nil, fmt.Errorf("resource %s: %w", r.URI, err)
	}
	return &r, nil
}

// Resource returns the resource uri of collection, deleted or not,
// tombstones included: the Source's latest statement about it, which the
// fetch workers and the harvester compare with a change. ErrNotFound if
// the catalog has no row of it.
func (c *Catalog) Resource(ctx context.Context, collection, uri string) (*Resource, error) {
	row := c.reads.resource.QueryRowContext(ctx, collection, uri)
	r, err := scanResource(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("resource %s in collection %s: %w", uri, collection, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read resource %s in collection %s: %w", uri, collection, err)
	}
	return r, nil
}

// SourceResources calls fn for every resource currently held (not
// deleted) from source in collection, ordered by URI. Rows are read a page
// at a time, so memory stays flat however many the Source has. An error
// from fn stops the walk and is returned.
func (c *Catalog) SourceResources(ctx context.Context, source, collection string, fn func(*Resource) error) error {
	return walkSource(ctx, c, source, collection, resourceCols, scanResource,
		func(r *Resource) string { return r.URI }, fn)
}

// HeldEntry is what a baseline's walk for deletions reads of a resource
// held: its collection, URI and the Source's time of its last change.
type HeldEntry struct {
	Collection, URI string
	UpstreamTime    time.Time
}

// SourceHeld is SourceResources reading only the columns of a HeldEntry.
// It is the harvester's walk for the deletions a baseline implies: at its
// end the walk reads the whole Source, and decoding every column of every
// row there allocated about a kilobyte per resource, the largest burst of
// a large baseline (a quarter of a gigabyte at 250,000 resources).
func (c *Catalog) SourceHeld(ctx context.Context, source, collection string, fn func(*HeldEntry) error) error {
	return walkSource(ctx, c, source, collection, `collection, uri, up_pack`, scanHeld,
		func(e *HeldEntry) string { return e.URI }, fn)
}

func scanHeld(s scanner) (*HeldEntry, error) {
	var e HeldEntry
	var up string
	if err := s.Scan(&e.Collection, &e.URI, &up); err != nil {
		return nil, err
	}
	var err error
	if e.UpstreamTime, _, err = upTimes(up); err != nil {
		return nil, fmt.Errorf("%s: %w", e.URI, err)
	}
	return &e, nil
}

// walkSource reads cols of the resources held from source in collection
// a page at a time, in URI order, each page after the URI of the last row
// of the one before, and calls fn for each row as scan reads it. It walks
// the collection by primary key and keeps the Source's rows: a collection
// is most often one Source's, and when Sources share one, the walk reads
// the others' rows too rather than every batch of the applier keeping an
// index by Source (schemaV8).
func walkSource[T any](ctx context.Context, c *Catalog, source, collection, cols string, scan func(scanner) (T, error), key func(T) string, fn func(T) error) error {
	var uri string
	for {
		page, err := readPage(ctx, c.reader, `SELECT `+cols+` FROM resources
			WHERE collection = ? AND uri > ? AND source = ? AND deleted = 0
			ORDER BY uri LIMIT ?`, []any{collection, uri, source, pageSize}, scan)
		if err != nil {
			return fmt.Errorf("list resources of source %s in collection %s: %w", source, collection, err)
		}
		for _, r := range page {
			if err := fn(r); err != nil {
				return err
			}
		}
		if len(page) < pageSize {
			return nil
		}
		uri = key(page[len(page)-1])
	}
}
