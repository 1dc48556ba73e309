package catalog

import (
	"context"
	"fmt"
	"time"
)

// CountChanges is how many changes of collection the log holds with
// from <= At < until (a zero until: no upper bound). The republisher asks
// it of each Change List period, to split only those that may be too
// large for one list; the count walks the (collection, at) index, not the
// rows.
func (c *Catalog) CountChanges(ctx context.Context, collection string, from, until time.Time) (int64, error) {
	end := int64(1<<63 - 1)
	if !until.IsZero() {
		end = until.UnixMicro()
	}
	var n int64
	err := c.reader.QueryRowContext(ctx, `SELECT count(*) FROM changes WHERE collection = ? AND at >= ? AND at < ?`,
		collection, from.UnixMicro(), end).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count changes of collection %s from %s: %w", collection, from.UTC().Format(time.RFC3339Nano), err)
	}
	return n, nil
}
