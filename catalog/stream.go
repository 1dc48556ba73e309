package catalog

import (
	"context"
	"database/sql"
	"errors"
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

// scanState reads one row of stateCols into rs.
func scanState(s scanner, rs *ResourceState) error {
	r, err := scanResource(&opScanner{s: s, op: &rs.Op})
	if err != nil {
		return err
	}
	rs.Resource = *r
	return nil
}

// opScanner scans a row of stateCols as one of resourceCols, the op last.
type opScanner struct {
	s  scanner
	op *string
}

func (o *opScanner) Scan(dst ...any) error { return o.s.Scan(append(dst, o.op)...) }

// ScanResources calls fn, in URI order, for the resources held in
// collection (deleted ones excluded) whose URI sorts after afterURI, at
// most limit of them (limit <= 0: all), as the catalog was when the walk
// began: it reads at the last applied sequence with ScanResourcesAt, in
// chunks each in a read transaction of its own (see chunk.go), so a
// change applied meanwhile is either wholly in it or not at all, and a
// walk paced by its reader (the Resource Dump, built at the blob store's
// pace) pins no snapshot and lets SQLite recycle the WAL. A walk that
// outlasts the change log's retention fails with ErrSnapshotGone. fn
// receives the same *ResourceState each time, refilled: it must not keep
// it, or anything in it but strings, after it returns. An error from fn
// stops the walk and is returned.
func (c *Catalog) ScanResources(ctx context.Context, collection, afterURI string, limit int, fn func(*ResourceState) error) error {
	seq, err := c.LastApplied(ctx)
	if err != nil {
		return fmt.Errorf("list resources of collection %s after %q: %w", collection, afterURI, err)
	}
	n := 0
	err = c.ScanResourcesAt(ctx, collection, afterURI, "", seq, func(rs *ResourceState) error {
		if limit > 0 && n == limit {
			return errScanLimit
		}
		n++
		return fn(rs)
	})
	if errors.Is(err, errScanLimit) {
		return nil
	}
	return err
}

// errScanLimit ends a ScanResources walk that has given limit resources.
var errScanLimit = errors.New("limit reached")

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
