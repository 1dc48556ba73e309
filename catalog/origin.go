package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// The lookups by origin. resources_origin holds only the rows whose origin
// is not their URI (schemaV7), so each asks for a row at its origin by its
// URI and for the others by origin, with the index's condition spelled
// out: SQLite uses a partial index only for a term that states its
// condition, and searches each side of the OR by its own index. A row is
// found by its URI through the primary key (collection, uri): in the
// collection asked for, or in each collection in turn (byURIOrOrigin;
// there is no index by URI alone, see schemaV8). On the origin's side the
// collection is asked as +collection, which no index may serve: asked
// plainly there, it let SQLite walk the collection's rows by primary key
// instead (TestLookupsByOriginSearchIndexes).
var (
	// byOriginSQL: ?1 the origin, ?2 the collection.
	byOriginSQL = `SELECT ` + stateCols + ` FROM resources
		WHERE (collection = ?2 AND uri = ?1 AND origin = uri OR origin = ?1 AND origin <> uri AND +collection = ?2) AND ` + heldOnce + `
		ORDER BY deleted, changed DESC LIMIT 1`
	// byURISQL: ?1 a harvested or origin URI.
	byURISQL = `SELECT ` + stateCols + ` FROM resources
		WHERE ` + byURIOrOrigin + ` AND ` + heldOnce + ` ORDER BY collection, uri`
)

// byURIOrOrigin is the condition of a row whose harvested or origin URI
// is ?1, in any collection.
const byURIOrOrigin = `(collection IN (SELECT name FROM collections) AND uri = ?1 OR origin = ?1 AND origin <> uri)`

// ResourceByOrigin returns the resource of collection whose origin URI is
// origin, deleted or not: the republisher names its copies by origin URI.
// When the same origin reached the collection through several upstreams,
// one still held wins, then the most recently changed. ErrNotFound if the
// catalog has never held it (a tombstone is not a copy: its URI answers
// as one never held).
func (c *Catalog) ResourceByOrigin(ctx context.Context, collection, origin string) (*ResourceState, error) {
	row := c.reader.QueryRowContext(ctx, byOriginSQL, origin, collection)
	rs := &ResourceState{}
	err := scanState(row, rs)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("resource with origin %s in collection %s: %w", origin, collection, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read resource with origin %s in collection %s: %w", origin, collection, err)
	}
	return rs, nil
}

// ResourcesByURI returns every resource, of any collection, held or
// deleted (tombstones excluded), whose harvested or origin URI is uri, ordered by collection and
// harvested URI. There are a few at most (one origin reached through a
// few upstreams), so a slice is fine. None is not an error.
func (c *Catalog) ResourcesByURI(ctx context.Context, uri string) ([]*ResourceState, error) {
	rows, err := c.reader.QueryContext(ctx, byURISQL, uri)
	if err != nil {
		return nil, fmt.Errorf("find resources named %s: %w", uri, err)
	}
	defer rows.Close()
	var out []*ResourceState
	for rows.Next() {
		rs := &ResourceState{}
		if err := scanState(rows, rs); err != nil {
			return nil, fmt.Errorf("find resources named %s: %w", uri, err)
		}
		out = append(out, rs)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find resources named %s: %w", uri, err)
	}
	return out, nil
}

// CollectionStats summarises one collection.
type CollectionStats struct {
	// Resources and Bytes are what the collection holds now.
	Resources int64
	Bytes     int64
	// Changes is the number of entries in its change log.
	Changes int64
	// First and Last are the times of its first and last change; zero
	// when it has none. After retention (Prune) First is the horizon.
	First, Last time.Time
	// Horizon is where retention has cut the change log: nothing before
	// it is listed. Zero when nothing was cut.
	Horizon time.Time
	// Floor, for a collection without a change yet, is the EVENTS time
	// of the last change the catalog applied, of any collection: every
	// event not applied yet is later on the stream, so a change of the
	// collection applied from now on has a time at or after Floor. It is
	// the honest at of the collection's empty Resource List (a time
	// taken from the clock could be later than the changes still to be
	// applied, and a Destination starting from it would miss them).
	// Zero when the catalog has applied no change at all.
	Floor time.Time
}

// CollectionStats reads the collection's totals and the bounds of its
// change log, kept current by every change, from one snapshot. A
// collection the catalog has never seen an event for has zero stats but
// for its Floor.
func (c *Catalog) CollectionStats(ctx context.Context, collection string) (CollectionStats, error) {
	var (
		s       CollectionStats
		f, l, h sql.NullInt64
	)
	err := c.reader.QueryRowContext(ctx, `SELECT first_at, last_at, resources, bytes, changes, horizon
		FROM collections WHERE name = ?`, collection).Scan(&f, &l, &s.Resources, &s.Bytes, &s.Changes, &h)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return CollectionStats{}, fmt.Errorf("read stats of collection %s: %w", collection, err)
	}
	if !l.Valid {
		// Read apart from the stats: a change of the collection applied
		// in between has a time at or after the floor read, so the floor
		// still comes no later than it.
		var r sql.NullInt64
		err := c.reader.QueryRowContext(ctx, `SELECT received FROM changes ORDER BY seq DESC LIMIT 1`).Scan(&r)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return CollectionStats{}, fmt.Errorf("read the last change applied: %w", err)
		}
		if r.Valid {
			s.Floor = time.UnixMicro(r.Int64).UTC()
		}
	}
	if f.Valid {
		s.First = time.UnixMicro(f.Int64).UTC()
	}
	if l.Valid {
		s.Last = time.UnixMicro(l.Int64).UTC()
	}
	if h.Valid {
		s.Horizon = time.UnixMicro(h.Int64).UTC()
	}
	return s, nil
}
