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
// A running sum needs a window, which SQLite materialises at five times
// the cost of a plain sum, so the window only walks the end of the part:
// a plain sum over the next maxEntries entries decides whether the budget
// ends the part at all, a second over the share of them that the average
// entry says fits (less a margin) takes the bulk, and the window finds
// the last few entries after it. Where the average misleads (the bulk
// alone overruns the budget), the window walks the whole part.
func (c *Catalog) CutResources(ctx context.Context, collection, afterURI string, maxEntries int, perRef, budget int64) (entries int, last string, err error) {
	n, last, total, err := c.sumResources(ctx, collection, afterURI, maxEntries, perRef)
	if err != nil || n <= 1 || total <= budget {
		return n, last, err
	}
	if bulk := int(int64(n) * (budget / 100 * cutShare) / total); bulk > 1 {
		k, bulkLast, sum, err := c.sumResources(ctx, collection, afterURI, bulk, perRef)
		if err != nil {
			return 0, "", err
		}
		if sum <= budget {
			more, moreLast, err := c.cutRunning(ctx, collection, bulkLast, maxEntries-k, perRef, budget-sum, false)
			if err != nil || more == 0 {
				return k, bulkLast, err
			}
			return k + more, moreLast, nil
		}
	}
	return c.cutRunning(ctx, collection, afterURI, maxEntries, perRef, budget, true)
}

// cutShare is the percentage of what the average entry says fits in a
// part that CutResources takes by a plain sum.
const cutShare = 97

// sumResources counts and sums the SizeHint of the next limit held
// resources after afterURI, with the URI of the last one.
func (c *Catalog) sumResources(ctx context.Context, collection, afterURI string, limit int, perRef int64) (n int, last string, sum int64, err error) {
	var (
		lastURI sql.NullString
		total   sql.NullInt64
	)
	err = c.reader.QueryRowContext(ctx, `SELECT count(*), max(uri), sum(n) FROM (
			SELECT uri, est + est_refs * ? AS n FROM resources INDEXED BY resources_held
			WHERE collection = ? AND uri > ? AND deleted = 0 ORDER BY uri LIMIT ?)`,
		perRef, collection, afterURI, limit).Scan(&n, &lastURI, &total)
	if err != nil {
		return 0, "", 0, fmt.Errorf("cut resources of collection %s after %q: %w", collection, afterURI, err)
	}
	return n, lastURI.String, total.Int64, nil
}

// cutRunning takes, of the next maxEntries held resources after afterURI,
// those whose running sum stays within budget, and the first whatever its
// size when first is set. The window has no ORDER BY of its own: its rows
// come in the subquery's URI order, and sorting them again cost more than
// the walk.
func (c *Catalog) cutRunning(ctx context.Context, collection, afterURI string, maxEntries int, perRef, budget int64, first bool) (entries int, last string, err error) {
	if maxEntries <= 0 {
		return 0, "", nil
	}
	var lastURI sql.NullString
	err = c.reader.QueryRowContext(ctx, `SELECT count(*), max(uri) FROM (
			SELECT uri, row_number() OVER w AS i, sum(n) OVER w AS run FROM (
				SELECT uri, est + est_refs * ? AS n FROM resources INDEXED BY resources_held
				WHERE collection = ? AND uri > ? AND deleted = 0 ORDER BY uri LIMIT ?)
			WINDOW w AS (ROWS UNBOUNDED PRECEDING))
		WHERE (? AND i = 1) OR run <= ?`, perRef, collection, afterURI, maxEntries, first, budget).Scan(&entries, &lastURI)
	if err != nil {
		return 0, "", fmt.Errorf("cut resources of collection %s after %q by size: %w", collection, afterURI, err)
	}
	return entries, lastURI.String, nil
}
