package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Value returns the small state stored under key by SetValue, or
// ErrNotFound. Keys are namespaced by their users ("republish/...").
func (c *Catalog) Value(ctx context.Context, key string) ([]byte, error) {
	var v []byte
	err := c.reader.QueryRowContext(ctx, `SELECT value FROM kv WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("value %s: %w", key, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read value %s: %w", key, err)
	}
	return v, nil
}

// SetValue stores value under key, replacing what was there.
func (c *Catalog) SetValue(ctx context.Context, key string, value []byte) error {
	if value == nil {
		value = []byte{}
	}
	err := c.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO kv (key, value) VALUES (?, ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
		return err
	})
	if err != nil {
		return fmt.Errorf("set value %s: %w", key, err)
	}
	return nil
}

// DeleteValue removes key; removing a missing key is not an error.
func (c *Catalog) DeleteValue(ctx context.Context, key string) error {
	err := c.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM kv WHERE key = ?`, key)
		return err
	})
	if err != nil {
		return fmt.Errorf("delete value %s: %w", key, err)
	}
	return nil
}
