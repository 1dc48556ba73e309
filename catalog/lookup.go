package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// Lookup is the part of a resource's row that a change is compared with
// before anything is fetched: the fetch workers' copy of the URI and
// their copy by hash, and a baseline's listed entry. It holds whether the
// copy is deleted, its digests, length and type, and the Source times of
// the last statement applied.
// It is read without the row's links, hops and upstream hashes, which
// Resource decodes and a worker never needs.
type Lookup struct {
	// URI is the resource's URI at its Source: the one asked for, or
	// that of the copy HeldByHash found.
	URI     string
	Deleted bool
	SHA256  string
	MD5     string
	Length  int64
	Type    string
	// UpstreamTime is the Source's time of the last statement applied to
	// the row (Resource's Upstream.Time).
	UpstreamTime time.Time
	// UpstreamModified is the resource's modification time as the Source
	// last stated it (Resource's Upstream.Modified).
	UpstreamModified time.Time
	// Order is the Source time that places that statement (up_order: the
	// later of its time and a baseline list's at, never earlier than an
	// older statement's): an event placed before it is ignored by
	// ApplyBatch. Zero when no statement had a Source time.
	Order time.Time
}

// lookupCols are the columns of a Lookup but its URI, in scanLookup's order.
const lookupCols = `deleted, sha256, md5, length, type, up_order, up_pack`

// lookupSQL reads the columns of a Lookup by URI.
const lookupSQL = `SELECT ` + lookupCols + ` FROM resources WHERE collection = ? AND uri = ?`

// scanLookup reads lookupCols into l, after the columns in head.
func scanLookup(s scanner, l *Lookup, head ...any) error {
	var order, up string
	if err := s.Scan(append(head, &l.Deleted, hexDigest{&l.SHA256}, hexDigest{&l.MD5}, &l.Length, &l.Type, &order, &up)...); err != nil {
		return err
	}
	var err error
	if l.UpstreamTime, l.UpstreamModified, err = upTimes(up); err != nil {
		return err
	}
	if l.Order, err = parseTime(order); err != nil {
		return fmt.Errorf("upstream order: %w", err)
	}
	return nil
}

// Lookup reads what a fetch worker needs of the row of uri in collection,
// deleted or not, tombstones included. found is false, with no error,
// when the catalog has no row of it, which is the common case during a
// first baseline: the miss costs no error value.
func (c *Catalog) Lookup(ctx context.Context, collection, uri string) (l Lookup, found bool, err error) {
	err = scanLookup(c.reads.lookup.QueryRowContext(ctx, collection, uri), &l)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Lookup{}, false, nil
	case err != nil:
		return Lookup{}, false, fmt.Errorf("look up resource %s in collection %s: %w", uri, collection, err)
	}
	l.URI = uri
	return l, true, nil
}

// HeldByHash finds a resource held from source whose copy has the md5 in
// hs, and the sha-256 and length too when hs and length give them (of
// several, the one changed last): the
// fetch workers' test for "already stored, do not fetch again". It goes by
// md5 alone, the one digest the catalog indexes (see schemaV6, schemaV11): a Source
// that declares only a sha-256 is answered by the blob store, whose keys
// are sha-256 digests. ErrNotFound if there is none, or if hs has no md5.
func (c *Catalog) HeldByHash(ctx context.Context, source string, hs resourcesync.Hashes, length *int64) (*Lookup, error) {
	md5 := hs.Get(resourcesync.MD5)
	if md5 == "" {
		return nil, fmt.Errorf("resource of source %s with hash %q: no md5 to look it up by: %w", source, hs, ErrNotFound)
	}
	var n sql.NullInt64
	if length != nil {
		n = sql.NullInt64{Int64: *length, Valid: true}
	}
	prefix, value := md5Args(md5)
	rows, err := c.reads.byMD5.QueryContext(ctx, prefix, value, source, n, digestValue(hs.Get(resourcesync.SHA256)))
	if err != nil {
		return nil, fmt.Errorf("find resource of source %s with hash %s: %w", source, hs, err)
	}
	defer rows.Close()
	var best *Lookup
	var bestChanged int64
	for rows.Next() {
		var l Lookup
		var changed int64
		if err := scanLookup(rows, &l, &l.URI, &changed); err != nil {
			return nil, fmt.Errorf("find resource of source %s with hash %s: %w", source, hs, err)
		}
		if best == nil || changed > bestChanged {
			best, bestChanged = &l, changed
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find resource of source %s with hash %s: %w", source, hs, err)
	}
	if best == nil {
		return nil, fmt.Errorf("resource of source %s with hash %s: %w", source, hs, ErrNotFound)
	}
	return best, nil
}
