package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// CutResources finds where a Resource List part starting after afterURI
// ends, without reading the rows: it walks the held resources of
// collection in URI order on the resources_held index, summing each one's
// SizeHint (fixed + refs*perRef), and takes at most maxEntries of them
// while the sum stays within budget; the first is taken whatever its
// size, so that every resource lands in some part. It returns how many it
// took (0 when none is left) and the URI of the last one.
//
// Most parts end at maxEntries well within the byte budget, so a plain
// sum over the next maxEntries entries decides first; only a part that
// would overrun the budget is cut by the running sum, whose window
// SQLite materialises (five times the cost of the plain sum).
func (c *Catalog) CutResources(ctx context.Context, collection, afterURI string, maxEntries int, perRef, budget int64) (entries int, last string, err error) {
	var (
		lastURI sql.NullString
		total   sql.NullInt64
	)
	err = c.reader.QueryRowContext(ctx, `SELECT count(*), max(uri), sum(n) FROM (
			SELECT uri, est + est_refs * ? AS n FROM resources INDEXED BY resources_held
			WHERE collection = ? AND uri > ? AND deleted = 0 ORDER BY uri LIMIT ?)`,
		perRef, collection, afterURI, maxEntries).Scan(&entries, &lastURI, &total)
	if err != nil {
		return 0, "", fmt.Errorf("cut resources of collection %s after %q: %w", collection, afterURI, err)
	}
	if entries <= 1 || total.Int64 <= budget {
		return entries, lastURI.String, nil
	}
	return c.cutRunning(ctx, collection, afterURI, maxEntries, perRef, budget)
}

// cutRunning is CutResources for a part that the byte budget ends: the
// entries whose running sum stays within it. The window has no ORDER BY
// of its own: its rows come in the subquery's URI order, and sorting
// them again cost more than the walk.
func (c *Catalog) cutRunning(ctx context.Context, collection, afterURI string, maxEntries int, perRef, budget int64) (entries int, last string, err error) {
	var lastURI sql.NullString
	err = c.reader.QueryRowContext(ctx, `SELECT count(*), max(uri) FROM (
			SELECT uri, row_number() OVER w AS i, sum(n) OVER w AS run FROM (
				SELECT uri, est + est_refs * ? AS n FROM resources INDEXED BY resources_held
				WHERE collection = ? AND uri > ? AND deleted = 0 ORDER BY uri LIMIT ?)
			WINDOW w AS (ROWS UNBOUNDED PRECEDING))
		WHERE i = 1 OR run <= ?`, perRef, collection, afterURI, maxEntries, budget).Scan(&entries, &lastURI)
	if err != nil {
		return 0, "", fmt.Errorf("cut resources of collection %s after %q by size: %w", collection, afterURI, err)
	}
	return entries, lastURI.String, nil
}
