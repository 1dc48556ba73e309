package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Resources calls fn, in URI order, for the resources held in collection
// (deleted ones excluded) whose URI sorts after afterURI, at most limit of
// them (limit <= 0: all). It is the republisher's Resource List: a page of
// a list index is Resources(ctx, coll, lastURIOfPreviousPage, 50000, fn).
// Rows are read by keyset pages, so memory stays flat; an error from fn
// stops the walk and is returned.
func (c *Catalog) Resources(ctx context.Context, collection, afterURI string, limit int, fn func(*Resource) error) error {
	left := limit
	for {
		n := pageSize
		if limit > 0 {
			n = min(n, left)
		}
		page, err := readPage(ctx, c.reader, `SELECT `+resourceCols+` FROM resources
			WHERE collection = ? AND uri > ? AND deleted = 0 ORDER BY uri LIMIT ?`,
			[]any{collection, afterURI, n}, scanResource)
		if err != nil {
			return fmt.Errorf("list resources of collection %s after %q: %w", collection, afterURI, err)
		}
		for _, r := range page {
			if err := fn(r); err != nil {
				return err
			}
		}
		if len(page) < n {
			return nil
		}
		afterURI = page[len(page)-1].URI
		if limit > 0 {
			if left -= len(page); left == 0 {
				return nil
			}
		}
	}
}

// CountResources is how many resources collection holds and their total
// length in bytes, kept current by every change: it costs no scan.
func (c *Catalog) CountResources(ctx context.Context, collection string) (n int, bytes int64, err error) {
	err = c.reader.QueryRowContext(ctx, `SELECT resources, bytes FROM collections WHERE name = ?`, collection).
		Scan(&n, &bytes)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("count resources of collection %s: %w", collection, err)
	}
	return n, bytes, nil
}

// ChangeSpan is the time of the first and of the last change in the
// collection's change log: the bounds of its Change Lists. Both are zero
// when it has none.
func (c *Catalog) ChangeSpan(ctx context.Context, collection string) (first, last time.Time, err error) {
	var f, l sql.NullInt64
	err = c.reader.QueryRowContext(ctx, `SELECT first_at, last_at FROM collections WHERE name = ?`, collection).
		Scan(&f, &l)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return first, last, fmt.Errorf("read change span of collection %s: %w", collection, err)
	}
	if f.Valid {
		first = time.UnixMicro(f.Int64).UTC()
	}
	if l.Valid {
		last = time.UnixMicro(l.Int64).UTC()
	}
	return first, last, nil
}

// Collections names every collection the catalog has seen an event for,
// sorted. There are a few per Source at most, so a slice is fine.
func (c *Catalog) Collections(ctx context.Context) ([]string, error) {
	rows, err := c.reader.QueryContext(ctx, `SELECT name FROM collections ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list collections: %w", err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("list collections: %w", err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list collections: %w", err)
	}
	return names, nil
}
