package catalog

import (
	"context"
	"database/sql"
	"fmt"
)

// migration is one forward step of the schema. Its position in migrations
// is its version minus one; a step, once released, is never edited: a
// change to the schema is a new step at the end of the list.
type migration struct {
	name string
	sql  string
	// fill, when set, runs after sql in the same transaction: the Go
	// half of a step whose new columns SQL cannot compute.
	fill func(context.Context, *sql.Tx) error
}

// migrations is the schema's whole history, oldest first. Adding a step
// (for example the hub's subscriptions) is appending a migration here.
var migrations = []migration{
	{name: "catalog", sql: schemaV1},
	{name: "upstream of each change", sql: schemaV2},
	{name: "packed rows for streaming reads", sql: schemaV3, fill: fillV3},
	{name: "upstream order of each resource, tombstones", sql: schemaV4},
	{name: "previous change of each change, retention horizon", sql: schemaV5},
	{name: "no sha-256 index of resources", sql: schemaV6},
	{name: "origin index of resources not at their origin", sql: schemaV7},
	{name: "no source and URI indexes of resources", sql: schemaV8},
}

// schemaVersion is the version this build writes: the number of steps.
func schemaVersion() int { return len(migrations) }

// migrate applies, in order, every step the file has not seen yet, each in
// its own immediate transaction together with the new user_version, so an
// interrupted migration leaves the file at the last whole step.
func (c *Catalog) migrate(ctx context.Context) error {
	var have int
	if err := c.writer.QueryRowContext(ctx, "PRAGMA user_version").Scan(&have); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if have > schemaVersion() {
		return fmt.Errorf("schema version %d is newer than this build's %d", have, schemaVersion())
	}
	for v := have + 1; v <= schemaVersion(); v++ {
		m := migrations[v-1]
		err := c.write(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, m.sql); err != nil {
				return err
			}
			if m.fill != nil {
				if err := m.fill(ctx, tx); err != nil {
					return err
				}
			}
			// PRAGMA takes no parameters; v is an int from this code.
			_, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v))
			return err
		})
		if err != nil {
			return fmt.Errorf("migrate to schema version %d (%s): %w", v, m.name, err)
		}
		c.log.Info("catalog schema migrated", "version", v, "step", m.name, "path", c.path)
	}
	return nil
}
