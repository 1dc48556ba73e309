package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Lookup is the part of a resource's row that a fetch worker compares a
// change with before it fetches, and a baseline compares a listed entry
// with: whether the copy is deleted, its digests, length and type, and the
// Source times of the last statement applied.
// It is read without the row's links, hops and upstream hashes, which
// Resource decodes and a worker never needs.
type Lookup struct {
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

// lookupSQL reads the columns of a Lookup, in scanLookup's order.
const lookupSQL = `SELECT deleted, sha256, md5, length, type, up_order, up_pack
	FROM resources WHERE collection = ? AND uri = ?`

// Lookup reads what a fetch worker needs of the row of uri in collection,
// deleted or not, tombstones included. found is false, with no error,
// when the catalog has no row of it, which is the common case during a
// first baseline: the miss costs no error value.
func (c *Catalog) Lookup(ctx context.Context, collection, uri string) (l Lookup, found bool, err error) {
	var order, up string
	err = c.reads.lookup.QueryRowContext(ctx, collection, uri).
		Scan(&l.Deleted, &l.SHA256, &l.MD5, &l.Length, &l.Type, &order, &up)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Lookup{}, false, nil
	case err != nil:
		return Lookup{}, false, fmt.Errorf("look up resource %s in collection %s: %w", uri, collection, err)
	}
	if l.UpstreamTime, l.UpstreamModified, err = upTimes(up); err != nil {
		return Lookup{}, false, fmt.Errorf("look up resource %s in collection %s: %w", uri, collection, err)
	}
	if l.Order, err = parseTime(order); err != nil {
		return Lookup{}, false, fmt.Errorf("look up resource %s in collection %s: upstream order: %w", uri, collection, err)
	}
	return l, true, nil
}
