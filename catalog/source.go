package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Source is an upstream Source the aggregator harvests, as the catalog
// remembers it: removing a Source from the configuration marks it removed
// rather than forgetting when it was added.
type Source struct {
	Name       string
	BaseURI    string
	Collection string
	Added      time.Time
	// Removed is zero while the Source is configured.
	Removed time.Time
}

// UpsertSource records s. A Source already known keeps its Added time;
// its base URI, collection and Removed time are replaced.
func (c *Catalog) UpsertSource(ctx context.Context, s Source) error {
	var removed sql.NullInt64
	if !s.Removed.IsZero() {
		removed = sql.NullInt64{Int64: s.Removed.UnixMicro(), Valid: true}
	}
	err := c.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO sources (name, base_uri, collection, added, removed)
			VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (name) DO UPDATE SET base_uri = excluded.base_uri,
				collection = excluded.collection, removed = excluded.removed`,
			s.Name, s.BaseURI, s.Collection, s.Added.UnixMicro(), removed)
		return err
	})
	if err != nil {
		return fmt.Errorf("record source %s: %w", s.Name, err)
	}
	return nil
}

// Sources lists every Source ever recorded, removed ones included, by name.
func (c *Catalog) Sources(ctx context.Context) ([]Source, error) {
	rows, err := c.reader.QueryContext(ctx, `SELECT name, base_uri, collection, added, removed
		FROM sources ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list sources: %w", err)
	}
	defer rows.Close()
	var out []Source
	for rows.Next() {
		var (
			s       Source
			added   int64
			removed sql.NullInt64
		)
		if err := rows.Scan(&s.Name, &s.BaseURI, &s.Collection, &added, &removed); err != nil {
			return nil, fmt.Errorf("list sources: %w", err)
		}
		s.Added = time.UnixMicro(added).UTC()
		if removed.Valid {
			s.Removed = time.UnixMicro(removed.Int64).UTC()
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list sources: %w", err)
	}
	return out, nil
}
