package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// pruneChunk is how many change-log entries Prune walks per write
// transaction, so that the applier never waits long for the writer.
const pruneChunk = 2000

// Pruned counts what Prune removed.
type Pruned struct {
	// Changes are change-log entries removed.
	Changes int64
	// Tombstones are rows of resources deleted before the cutoff
	// (deleted copies and the tombstones of resources never held).
	Tombstones int64
}

// Prune applies retention to every collection: what the change log and
// the deleted resources say of the time before cutoff goes, except what
// a snapshot at or after the new horizon still reads.
//
//   - A change is removed once a later change of its resource is itself
//     before cutoff: the latest change of each resource before cutoff
//     stays, since a Resource List Index taken after cutoff may have to
//     list the resource as that change left it (ScanResourcesAt).
//   - A resource deleted before cutoff loses its row and its deletion.
//   - A tombstone (a deletion of a resource never held) written before
//     cutoff goes.
//
// Each collection then records cutoff as its horizon, and the sequence of
// its last change before it: Change Lists start at the horizon
// (CollectionStats.First), and a snapshot older than that sequence fails
// with ErrSnapshotGone. A cutoff at or before the current horizon does
// nothing. A collection whose last change is before cutoff is cut at
// that change's time instead, rounded down to a multiple of align since
// the Unix epoch (the Change List period: see gc.Deps.Align), so that its
// last Change List stays whole and listed.
func (c *Catalog) Prune(ctx context.Context, cutoff time.Time, align time.Duration) (Pruned, error) {
	var total Pruned
	colls, err := c.collectionNames(ctx)
	if err != nil {
		return total, err
	}
	for _, coll := range colls {
		p, err := c.pruneCollection(ctx, coll, cutoff.UnixMicro(), align.Microseconds())
		total.Changes += p.Changes
		total.Tombstones += p.Tombstones
		if err != nil {
			return total, fmt.Errorf("prune collection %s before %s: %w", coll, cutoff.UTC(), err)
		}
	}
	return total, nil
}

func (c *Catalog) collectionNames(ctx context.Context) ([]string, error) {
	rows, err := c.reader.QueryContext(ctx, `SELECT name FROM collections ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list collections: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("list collections: %w", err)
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// pruneCollection walks the collection's changes before cutoff from its
// last horizon on (the ones before were walked by earlier runs), a chunk
// per transaction, then its tombstones.
func (c *Catalog) pruneCollection(ctx context.Context, coll string, cutoff, align int64) (Pruned, error) {
	var p Pruned
	var horizon, last sql.NullInt64
	var from int64
	err := c.reader.QueryRowContext(ctx, `SELECT horizon, horizon_seq, last_at FROM collections WHERE name = ?`, coll).Scan(&horizon, &from, &last)
	if err != nil {
		return p, err
	}
	if last.Valid && last.Int64 < cutoff {
		cutoff = last.Int64
		if align > 0 {
			cutoff -= ((cutoff % align) + align) % align
		}
	}
	if horizon.Valid && horizon.Int64 >= cutoff {
		return p, nil
	}
	for {
		var last int64
		var n int
		err := c.write(ctx, func(tx *sql.Tx) error {
			var err error
			last, n, err = pruneChunkTx(ctx, tx, coll, cutoff, from, &p)
			return err
		})
		if err != nil {
			return p, err
		}
		if n > 0 {
			from = last
		}
		if n < pruneChunk {
			break
		}
	}
	err = c.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM resources WHERE collection = ? AND seq = 0 AND deleted = 1 AND changed < ?`, coll, cutoff)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		p.Tombstones += n
		_, err = tx.ExecContext(ctx, `UPDATE collections SET horizon = ?, horizon_seq = max(horizon_seq, ?),
			first_at = CASE WHEN first_at IS NULL OR first_at >= ?1 THEN first_at ELSE ?1 END WHERE name = ?`,
			cutoff, from, coll)
		return err
	})
	return p, err
}

// pruneChunkTx walks up to pruneChunk changes of coll after sequence
// from and before cutoff, removing each one's predecessor and, for a
// deletion that is still the resource's state, the resource's row and
// the deletion itself. It returns the last sequence walked and how many.
func pruneChunkTx(ctx context.Context, tx *sql.Tx, coll string, cutoff, from int64, p *Pruned) (int64, int, error) {
	rows, err := tx.QueryContext(ctx, `SELECT seq, prev, op, uri FROM changes
		WHERE collection = ? AND seq > ? AND at < ? ORDER BY seq LIMIT ?`, coll, from, cutoff, pruneChunk)
	if err != nil {
		return 0, 0, err
	}
	type walked struct {
		seq, prev int64
		op, uri   string
	}
	var chunk []walked
	for rows.Next() {
		var w walked
		if err := rows.Scan(&w.seq, &w.prev, &w.op, &w.uri); err != nil {
			rows.Close()
			return 0, 0, err
		}
		chunk = append(chunk, w)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, 0, err
	}
	var removed int64
	for _, w := range chunk {
		if w.prev > 0 {
			res, err := tx.ExecContext(ctx, `DELETE FROM changes WHERE seq = ?`, w.prev)
			if err != nil {
				return 0, 0, err
			}
			n, _ := res.RowsAffected()
			removed += n
		}
		if w.op != "deleted" {
			continue
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM resources WHERE collection = ? AND uri = ? AND seq = ? AND deleted = 1`, coll, w.uri, w.seq)
		if err != nil {
			return 0, 0, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			continue // created again since: its deletion stays its predecessor
		}
		p.Tombstones++
		if _, err := tx.ExecContext(ctx, `DELETE FROM changes WHERE seq = ?`, w.seq); err != nil {
			return 0, 0, err
		}
		removed++
	}
	p.Changes += removed
	if _, err := tx.ExecContext(ctx, `UPDATE collections SET changes = changes - ? WHERE name = ?`, removed, coll); err != nil {
		return 0, 0, err
	}
	if len(chunk) == 0 {
		return from, 0, nil
	}
	return chunk[len(chunk)-1].seq, len(chunk), nil
}

// BlobRefs calls fn with the sha-256 of every blob the catalog refers to,
// read from one snapshot whose last applied sequence it returns: the copy
// of every held resource and of every change in the log (a Change Dump
// packages them). A key may come more than once.
func (c *Catalog) BlobRefs(ctx context.Context, fn func(sha256 string) error) (uint64, error) {
	tx, err := c.scans.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return 0, fmt.Errorf("read blob references: %w", err)
	}
	defer tx.Rollback()
	var seq int64
	if err := tx.QueryRowContext(ctx, `SELECT seq FROM applied WHERE id = 1`).Scan(&seq); err != nil {
		return 0, fmt.Errorf("read blob references: %w", err)
	}
	for _, q := range []string{
		`SELECT ` + digestSQL("sha256") + ` FROM resources WHERE deleted = 0 AND sha256 != ''`,
		`SELECT ` + digestSQL("sha256") + ` FROM changes WHERE op != 'deleted' AND sha256 != ''`,
	} {
		if err := eachString(ctx, tx, q, fn); err != nil {
			return 0, fmt.Errorf("read blob references: %w", err)
		}
	}
	return uint64(seq), nil
}

// eachString runs a one-column query and calls fn with each value.
func eachString(ctx context.Context, tx *sql.Tx, q string, fn func(string) error) error {
	rows, err := tx.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	var s string
	for rows.Next() {
		if err := rows.Scan(&s); err != nil {
			return err
		}
		if err := fn(s); err != nil {
			return err
		}
	}
	return rows.Err()
}
