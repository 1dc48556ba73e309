package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// maxScans bounds the streaming reads running at once. Each holds one
// connection for as long as its reader takes; past the bound a new one
// waits for a connection, never the short reads, which use their own pool.
const maxScans = 64

// openScans opens the pool of the single-snapshot reads.
func openScans(path string) (*sql.DB, error) {
	db, err := sql.Open("sqlite3", dsn(path, "_query_only=true"))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(maxScans)
	db.SetMaxIdleConns(4)
	return db, nil
}

// ResourceState is a resource's row with the op of its last change in the
// log (created, updated or deleted; "" if the log has none).
type ResourceState struct {
	Resource
	Op string
}

// stateCols is the column list of a ResourceState, in scanState's order.
const stateCols = resourceCols + `, coalesce((SELECT op FROM changes WHERE changes.seq = resources.seq), '')`

// ScanResources calls fn, in URI order, for the resources held in
// collection (deleted ones excluded) whose URI sorts after afterURI, at
// most limit of them (limit <= 0: all), all read from one snapshot of the
// catalog: one query, so a change applied meanwhile is either wholly in it
// or not at all. Unlike Resources, it holds a read snapshot for the whole
// walk, which keeps SQLite from recycling the WAL until fn has seen the
// last row: the Resource Dump, built in the background at the store's
// pace, reads it; Destinations' Resource Lists are read in chunks with
// ScanResourcesAt (see chunk.go). fn receives the same *ResourceState each time, refilled: it must
// not keep it, or anything in it but strings, after it returns. An error
// from fn stops the walk and is returned.
func (c *Catalog) ScanResources(ctx context.Context, collection, afterURI string, limit int, fn func(*ResourceState) error) error {
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	// One column, read as text: each column costs the driver two
	// allocations and a row several hundred nanoseconds, and a string
	// lets the decoder hand out substrings (see packDecoder.state).
	rows, err := c.scans.QueryContext(ctx, `SELECT copy_pack || up_pack || uri FROM resources
		WHERE collection = ? AND uri > ? AND deleted = 0 ORDER BY uri LIMIT ?`, collection, afterURI, limit)
	if err != nil {
		return fmt.Errorf("list resources of collection %s after %q: %w", collection, afterURI, err)
	}
	defer rows.Close()
	var (
		d   packDecoder
		rs  ResourceState
		row string
	)
	rs.Collection = collection
	for rows.Next() {
		if err := rows.Scan(&row); err != nil {
			return fmt.Errorf("list resources of collection %s: %w", collection, err)
		}
		if err := d.state(row, &rs); err != nil {
			return fmt.Errorf("list resources of collection %s: %w", collection, err)
		}
		if err := fn(&rs); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list resources of collection %s after %q: %w", collection, afterURI, err)
	}
	return nil
}

// LoggedChange is one change of the aggregator's change log with what the
// Source said of it at the time.
type LoggedChange struct {
	ChangeRecord
	Source string
	// UpstreamOp is the Source's op, which may differ from the
	// aggregator's (an update of a resource not held yet is created here).
	UpstreamOp string
	Upstream   Upstream
}

// loggedCols is the column list of a LoggedChange, in scanLogged's order.
const loggedCols = `seq, collection, uri, op, at, received, sha256, md5, length, type,
	source, up_op, up_time, up_modified, up_hash, up_length, up_type, links`
