package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Errors of a read at an earlier sequence (ScanResourcesAt).
var (
	// ErrSnapshotAhead: the catalog has not applied the sequence yet (a
	// replica behind the one that planned the snapshot). Asking again
	// shortly succeeds.
	ErrSnapshotAhead = errors.New("snapshot is ahead of this catalog")
	// ErrSnapshotGone: retention has pruned the change log past the
	// sequence, so the catalog as it was then can no longer be rebuilt.
	ErrSnapshotGone = errors.New("snapshot is older than the change log's retention")
)

// ScanResourcesAt calls fn, in URI order, for the resources collection
// held just after EVENTS sequence seq whose URI is in (afterURI, lastURI]
// ("" for no upper bound): the catalog as it was at seq, whatever it
// applied since. A resource whose row has not changed since seq is read
// from its row (with the Source's metadata as last restated, which no
// change log entry records); one changed since is read from its change
// that held at seq, found through the first later change's prev. That
// second set is read per chunk of the first (see chunk.go), each chunk in
// a read transaction of its own that ends before fn sees its rows: reading
// the catalog as it was at seq, the chunks agree with each other, and a
// slow reader pins no snapshot. It returns
// ErrSnapshotAhead or ErrSnapshotGone (wrapped) when seq cannot be read.
// fn's argument is reused, as with ScanResources.
func (c *Catalog) ScanResourcesAt(ctx context.Context, collection, afterURI, lastURI string, seq uint64, fn func(*ResourceState) error) error {
	where := fmt.Sprintf("list resources of collection %s at sequence %d", collection, seq)
	var k chunk
	for cursor := afterURI; ; {
		next, err := c.scanChunkAt(ctx, &k, where, collection, cursor, lastURI, seq, fn)
		if err != nil || next == "" {
			return err
		}
		cursor = next
	}
}

// changedSince reads, sorted by URI, the state at seq of the resources in
// (afterURI, lastURI] that the collection held at seq and has changed
// since: the first change of a resource after seq is the one whose prev
// is at or before seq, and prev names the change that held then.
func changedSince(ctx context.Context, tx *sql.Tx, collection, afterURI, lastURI string, seq uint64) ([]ResourceState, error) {
	rows, err := tx.QueryContext(ctx, `SELECT `+digestCols("p")+`, CAST(p.pack || p.uri AS TEXT) FROM changes f JOIN changes p ON p.seq = f.prev
		WHERE f.collection = ? AND f.seq > ? AND f.prev BETWEEN 1 AND ? AND f.uri > ? AND (? = '' OR f.uri <= ?)
			AND p.op != 'deleted'`, collection, int64(seq), int64(seq), afterURI, lastURI, lastURI)
	if err != nil {
		return nil, fmt.Errorf("read changes since: %w", err)
	}
	defer rows.Close()
	var (
		out []ResourceState
		r   packedRow
	)
	for rows.Next() {
		pack, err := r.scan(rows)
		if err != nil {
			return nil, fmt.Errorf("read changes since: %w", err)
		}
		var (
			d  packDecoder // one each: the states outlive the walk
			ch LoggedChange
		)
		if err := d.logged(pack, &ch); err != nil {
			return nil, fmt.Errorf("read changes since: %w", err)
		}
		out = append(out, ResourceState{Op: ch.Op, Resource: Resource{
			Collection: collection, URI: ch.URI, Source: ch.Source, SHA256: ch.SHA256, MD5: ch.MD5,
			Length: ch.Length, Type: ch.Type, Changed: ch.At, Seq: ch.Seq, Upstream: ch.Upstream,
		}})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read changes since: %w", err)
	}
	slices.SortFunc(out, func(a, b ResourceState) int { return strings.Compare(a.URI, b.URI) })
	return out, nil
}

// checkSnapshot tells whether the catalog can be read as it was at seq:
// it has applied seq, and retention has not pruned past it.
func checkSnapshot(ctx context.Context, q rowQuerier, collection string, seq uint64) error {
	var applied, horizonSeq int64
	err := q.QueryRowContext(ctx, `SELECT a.seq, coalesce((SELECT horizon_seq FROM collections WHERE name = ?), 0)
		FROM applied a WHERE a.id = 1`, collection).Scan(&applied, &horizonSeq)
	switch {
	case err != nil:
		return err
	case uint64(applied) < seq:
		return fmt.Errorf("applied %d: %w", applied, ErrSnapshotAhead)
	case uint64(horizonSeq) > seq:
		return fmt.Errorf("pruned to %d: %w", horizonSeq, ErrSnapshotGone)
	}
	return nil
}

// SnapshotAt checks that the catalog can be read as it was at seq (see
// ScanResourcesAt) and returns the time of the collection's last change
// at or before seq: the at of a snapshot taken at seq, zero when the
// collection had no change then.
func (c *Catalog) SnapshotAt(ctx context.Context, collection string, seq uint64) (time.Time, error) {
	where := fmt.Sprintf("time of collection %s at sequence %d", collection, seq)
	if err := checkSnapshot(ctx, c.reader, collection, seq); err != nil {
		return time.Time{}, fmt.Errorf("%s: %w", where, err)
	}
	var at int64
	err := c.reader.QueryRowContext(ctx, `SELECT at FROM changes WHERE collection = ? AND seq <= ?
		ORDER BY seq DESC LIMIT 1`, collection, int64(seq)).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %w", where, err)
	}
	return time.UnixMicro(at).UTC(), nil
}
