package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Cursor returns the harvester's named cursor for source (the until of the
// last Change List processed, the greatest change datetime seen, an ETag),
// or "" if it was never set: a Source with no cursor is harvested from its
// baseline. A node keeps cursors in the shared viaduct_positions bucket
// and reads these only to carry over those of versions that kept them
// here (harvester/sourceleases_cursors.go); the harvester's own tests give it the catalog
// as its Cursors.
func (c *Catalog) Cursor(ctx context.Context, source, name string) (string, error) {
	var v string
	err := c.reader.QueryRowContext(ctx, `SELECT value FROM cursors WHERE source = ? AND name = ?`, source, name).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read cursor %s of source %s: %w", name, source, err)
	}
	return v, nil
}

// SetCursor stores a cursor. Cursors are the Source's own values, never
// the local clock; the harvester sets one only once what it covers is
// queued.
func (c *Catalog) SetCursor(ctx context.Context, source, name, value string) error {
	err := c.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO cursors (source, name, value) VALUES (?, ?, ?)
			ON CONFLICT (source, name) DO UPDATE SET value = excluded.value`, source, name, value)
		return err
	})
	if err != nil {
		return fmt.Errorf("set cursor %s of source %s: %w", name, source, err)
	}
	return nil
}
