package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"time"

	"github.com/viaduct-mirror/viaduct"
)

// The reads Destinations pace (ScanResourcesAt, ScanChanges) read
// the catalog in chunks of pageSize rows, each in a read transaction of
// its own that ends before fn sees the chunk's first row. A Destination
// that reads a list slowly, or stops, so holds no snapshot: SQLite can
// checkpoint the WAL and start it over meanwhile, and the scan connection
// is free for the next chunk of any other read. A chunk costs one query;
// at 1,000 rows that is a few per cent of reading them.

// chunk holds the rows of one chunk, as the text of their packs.
type chunk struct {
	rows []string
	row  packedRow
}

// fill runs query in tx and keeps its rows, at most pageSize of them; it
// reports whether the chunk is full (more rows may follow). query selects
// digestCols and then the packs and URI as one value (packedRow).
func (k *chunk) fill(ctx context.Context, q rowsQuerier, query string, args ...any) (bool, error) {
	k.rows = k.rows[:0]
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	for rows.Next() {
		row, err := k.row.scan(rows)
		if err != nil {
			return false, err
		}
		k.rows = append(k.rows, row)
	}
	if err := rows.Err(); err != nil {
		return false, err
	}
	return len(k.rows) == pageSize, nil
}

// rowsQuerier is a *sql.DB or a *sql.Tx.
type rowsQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// scanChunkAt is one chunk of ScanResourcesAt: the resources of
// (afterURI, lastURI] at seq, at most pageSize rows of the resources table
// and the entries that held then of those changed since in the same URI
// range, all from one read transaction that ends before fn is called. It
// returns the URI to go on after, "" when the range is done.
func (c *Catalog) scanChunkAt(ctx context.Context, k *chunk, where, collection, afterURI, lastURI string, seq uint64, fn func(*ResourceState) error) (string, error) {
	tx, err := c.scans.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return "", fmt.Errorf("%s: %w", where, err)
	}
	defer tx.Rollback()
	if err := checkSnapshot(ctx, tx, collection, seq); err != nil {
		return "", fmt.Errorf("%s: %w", where, err)
	}
	q := `SELECT ` + digestCols("") + `, CAST(copy_pack || up_pack || uri AS TEXT) FROM resources
		WHERE collection = ? AND uri > ? AND deleted = 0 AND seq <= ?`
	args := []any{collection, afterURI, int64(seq)}
	if lastURI != "" {
		q += ` AND uri <= ?`
		args = append(args, lastURI)
	}
	full, err := k.fill(ctx, tx, q+` ORDER BY uri LIMIT ?`, append(args, pageSize)...)
	if err != nil {
		return "", fmt.Errorf("%s: %w", where, err)
	}
	var d packDecoder
	var rs ResourceState
	rs.Collection = collection
	hi := lastURI
	if full {
		if err := d.state(k.rows[len(k.rows)-1], &rs); err != nil {
			return "", fmt.Errorf("%s: %w", where, err)
		}
		hi = rs.URI
	}
	then, err := changedSince(ctx, tx, collection, afterURI, hi, seq)
	if err != nil {
		return "", fmt.Errorf("%s: %w", where, err)
	}
	tx.Rollback() // the snapshot ends here, before fn sees a row
	for _, row := range k.rows {
		if err := d.state(row, &rs); err != nil {
			return "", fmt.Errorf("%s: %w", where, err)
		}
		for len(then) > 0 && then[0].URI < rs.URI {
			if err := fn(&then[0]); err != nil {
				return "", err
			}
			then = then[1:]
		}
		if err := fn(&rs); err != nil {
			return "", err
		}
	}
	for i := range then {
		if err := fn(&then[i]); err != nil {
			return "", err
		}
	}
	if !full || hi == lastURI {
		return "", nil
	}
	return hi, nil
}

// ScanChanges calls fn, in time order (which is sequence order), for the
// changes of collection with from <= At < until, read in chunks (see
// above) along the (collection, at) index: a change's time is strictly
// greater than every earlier one of its collection, so time order is
// sequence order, and the walk starts at from and ends at until without
// reading the changes before or after them, as a walk by sequence would.
// The change log only grows at its end, so the chunks together are the
// log as it was when the last was read. A zero
// from means from the start, a zero until no upper bound. fn receives the
// same *LoggedChange each time, refilled: it must not keep it, or anything
// in it but strings, after it returns. An error from fn stops the walk
// and is returned.
func (c *Catalog) ScanChanges(ctx context.Context, collection string, from, until time.Time, fn func(*LoggedChange) error) error {
	where := fmt.Sprintf("list changes of collection %s from %s", collection, from.UTC())
	start, end := microBounds(from, until)
	var (
		k  chunk
		d  packDecoder
		ch LoggedChange
	)
	ch.Collection = collection
	for first := true; ; first = false {
		// Entries before the collection's retention horizon are kept
		// only for snapshots (see Prune), never listed.
		op := ">"
		if first {
			op = ">="
		}
		full, err := k.fill(ctx, c.scans, `SELECT `+digestCols("")+`, CAST(pack || uri AS TEXT) FROM changes
			WHERE collection = ? AND at `+op+` ? AND at < ?
				AND at >= coalesce((SELECT horizon FROM collections WHERE name = ?), ?) ORDER BY at LIMIT ?`,
			collection, start, end, collection, int64(math.MinInt64), pageSize)
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		for _, pack := range k.rows {
			if err := d.logged(pack, &ch); err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
			if err := fn(&ch); err != nil {
				return err
			}
		}
		if !full {
			return nil
		}
		start = ch.At.UnixMicro()
	}
}

// ChangeRun is a run of consecutive changes of a collection, in time
// order, with the sums of the size bounds (SizeHint) of the entries a
// Change List renders from them.
type ChangeRun struct {
	First, Last time.Time // the times of its first and last change
	Count       int
	Fixed, Refs int64
}

// changeRunSize is how many changes a run of ScanChangeSizes holds at
// most: one query a run, so that SQLite sums a run's rows and only the
// sums cross into Go.
const changeRunSize = 1024

// ScanChangeSizes calls fn, in time order, with runs of consecutive
// changes of collection with from <= At < until, as ScanChanges walks
// them, and the sums of their bounds, without reading the changes: the
// rows keep their bounds (schema 13). fn takes a run whole, or returns
// false to be given its changes one by one, each a run of one, which it
// must take. A run holding a change logged before schema 13, which keeps
// no bounds, is given one by one, each change decoded to bound it. An
// error from fn stops the walk and is returned.
//
// Walking a period of a million changes to cut it into Change Lists took
// 0.52 CPU-seconds summing runs in SQL, against 1.48 reading each row's
// bounds into Go and 1.9 decoding each change.
func (c *Catalog) ScanChangeSizes(ctx context.Context, collection string, from, until time.Time, fn func(*ChangeRun) (bool, error)) error {
	where := fmt.Sprintf("size changes of collection %s from %s", collection, from.UTC())
	start, end := microBounds(from, until)
	// As ScanChanges: the entries before the horizon are never listed.
	runs, err := c.scans.PrepareContext(ctx, `SELECT count(*), coalesce(min(at), 0), coalesce(max(at), 0),
			coalesce(sum(est), 0), coalesce(sum(est_refs), 0), count(est) FROM (
		SELECT at, est, est_refs FROM changes WHERE collection = ? AND at >= ? AND at < ?
			AND at >= coalesce((SELECT horizon FROM collections WHERE name = ?), ?) ORDER BY at LIMIT ?)`)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	defer runs.Close()
	for {
		var (
			run         ChangeRun
			first, last int64
			bounded     int
		)
		err := runs.QueryRowContext(ctx, collection, start, end, collection, int64(math.MinInt64), changeRunSize).
			Scan(&run.Count, &first, &last, &run.Fixed, &run.Refs, &bounded)
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if run.Count == 0 {
			return nil
		}
		run.First, run.Last = time.UnixMicro(first).UTC(), time.UnixMicro(last).UTC()
		whole := bounded == run.Count
		if whole {
			if whole, err = fn(&run); err != nil {
				return err
			}
		}
		if !whole {
			if err := c.changeSizesOneByOne(ctx, collection, first, last, fn); err != nil {
				return err
			}
		}
		if run.Count < changeRunSize {
			return nil
		}
		start = last + 1
	}
}

// changeSizesOneByOne gives fn the changes of collection with first <=
// at <= last one by one, each a run of one: its bounds as the row keeps
// them, or as the change decoded gives them.
func (c *Catalog) changeSizesOneByOne(ctx context.Context, collection string, first, last int64, fn func(*ChangeRun) (bool, error)) error {
	where := fmt.Sprintf("size changes of collection %s from %s", collection, time.UnixMicro(first).UTC())
	rows, err := c.scans.QueryContext(ctx, `SELECT at, coalesce(est, -1), coalesce(est_refs, 0),
			iif(est IS NULL, sha256, ''), iif(est IS NULL, md5, ''), iif(est IS NULL, CAST(pack || uri AS TEXT), '')
		FROM changes WHERE collection = ? AND at >= ? AND at <= ?
			AND at >= coalesce((SELECT horizon FROM collections WHERE name = ?), ?) ORDER BY at`,
		collection, first, last, collection, int64(math.MinInt64))
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	type sized struct {
		at, fixed, refs int64
		row             string // the whole row when it keeps no bounds
	}
	var (
		page []sized
		r    packedRow
		at   int64
		s    sized
	)
	for rows.Next() {
		r.buf = r.buf[:0]
		if err := rows.Scan(&at, &s.fixed, &s.refs, packedDigest{&r}, packedDigest{&r}, packedRest{&r}); err != nil {
			rows.Close()
			return fmt.Errorf("%s: %w", where, err)
		}
		s.at, s.row = at, ""
		if s.fixed < 0 {
			s.row = string(r.buf)
		}
		page = append(page, s)
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	var (
		d  packDecoder
		ch LoggedChange
	)
	for _, s := range page {
		if s.row != "" {
			if err := d.logged(s.row, &ch); err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
			up := viaduct.Change{URI: ch.URI, Type: ch.Upstream.Type, Links: ch.Upstream.Links}
			s.fixed, s.refs = SizeHint(ch.Type, &up)
		}
		t := time.UnixMicro(s.at).UTC()
		if _, err := fn(&ChangeRun{First: t, Last: t, Count: 1, Fixed: s.fixed, Refs: s.refs}); err != nil {
			return err
		}
	}
	return nil
}

// microBounds is the interval [from, until) in the change log's
// microseconds: a zero from is the log's start, a zero until its end.
func microBounds(from, until time.Time) (start, end int64) {
	start, end = math.MinInt64, math.MaxInt64
	if !from.IsZero() {
		start = from.UnixMicro()
	}
	if !until.IsZero() {
		end = until.UnixMicro()
	}
	return start, end
}
