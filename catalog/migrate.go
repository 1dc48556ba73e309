package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// ErrSchemaNewer is returned by Open for a catalog written by a newer
// build: its tables may mean what this build cannot know, so it is not
// read at all. The way back is the backup taken before the upgrade.
var ErrSchemaNewer = errors.New("catalog schema is newer than this build")

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
	{name: "each fact of a resource and a change kept once", sql: schemaV9, fill: fillV9},
	{name: "the copy's digests kept once, the Source's marked where they repeat them", sql: schemaV10, fill: fillV10},
	{name: "the index by md5 on the change log, a digest's prefix and the row's key", sql: schemaV11},
	{name: "the copy's digests kept as bytes", sql: schemaV12},
	{name: "the size bounds of each change", sql: schemaV13},
	{name: "links packed, their hrefs against the URI; ops and common media types coded", sql: schemaV14},
}

// schemaVersion is the version this build writes: the number of steps.
func schemaVersion() int { return len(migrations) }

// SchemaVersion is the catalog schema version this build reads and
// writes, as recorded in a backup's manifest.
func SchemaVersion() int { return schemaVersion() }

// migrate applies, in order, every step the file has not seen yet, each in
// its own immediate transaction together with the new user_version, so an
// interrupted migration leaves the file at the last whole step. A new file
// is created at the current version with one line of log; an existing one
// that migrates says from and to which version before it starts, since a
// migrated file cannot be read by the build before (see ErrSchemaNewer).
func (c *Catalog) migrate(ctx context.Context) error {
	var have int
	if err := c.writer.QueryRowContext(ctx, "PRAGMA user_version").Scan(&have); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	want := schemaVersion()
	switch {
	case have > want:
		return fmt.Errorf("%w: the file is at schema version %d and this build knows versions up to %d; "+
			"run the newer viaduct that wrote it, or restore the backup taken before the upgrade (docs/runbook.md)",
			ErrSchemaNewer, have, want)
	case have == want:
		return nil
	case have > 0:
		c.log.Info("catalog schema migrating", "from", have, "to", want, "path", c.path)
	}
	for v := have + 1; v <= want; v++ {
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
			return fmt.Errorf("migrate schema from version %d to %d (%s): %w", v-1, v, m.name, err)
		}
		if have > 0 {
			c.log.Info("catalog schema migrated", "from", v-1, "to", v, "step", m.name, "path", c.path)
		}
	}
	if have == 0 {
		c.log.Info("catalog created", "schema_version", want, "path", c.path)
	}
	return nil
}
