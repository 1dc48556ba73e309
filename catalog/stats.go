package catalog

import (
	"context"
	"fmt"
)

// Stats are the catalog's gauges, cheap enough to read on every scrape of
// the metrics endpoint.
type Stats struct {
	// Resources and Bytes are what all collections hold now.
	Resources int64
	Bytes     int64
	// Changes is the length of the change log.
	Changes     int64
	Collections int
	LastApplied uint64
}

// Stats reads the totals, from one snapshot.
func (c *Catalog) Stats(ctx context.Context) (Stats, error) {
	var (
		s    Stats
		last int64
	)
	err := c.reader.QueryRowContext(ctx, `SELECT
			coalesce(sum(resources), 0), coalesce(sum(bytes), 0), coalesce(sum(changes), 0), count(*),
			(SELECT seq FROM applied WHERE id = 1)
		FROM collections`).Scan(&s.Resources, &s.Bytes, &s.Changes, &s.Collections, &last)
	if err != nil {
		return Stats{}, fmt.Errorf("read catalog stats: %w", err)
	}
	s.LastApplied = uint64(last)
	return s, nil
}
