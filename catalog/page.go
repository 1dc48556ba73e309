package catalog

import (
	"context"
	"database/sql"
)

// pageSize is how many rows a streaming read takes per query. Between
// pages the read snapshot is released, so a slow consumer (a Destination
// downloading a million-entry list) neither holds a connection nor stops
// SQLite from checkpointing the WAL.
const pageSize = 1000

// readPage runs one page's query and scans its rows into a slice of at
// most pageSize.
func readPage[T any](ctx context.Context, db *sql.DB, query string, args []any, scan func(scanner) (T, error)) ([]T, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	page := make([]T, 0, pageSize)
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		page = append(page, v)
	}
	return page, rows.Err()
}
