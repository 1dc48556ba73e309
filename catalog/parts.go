package catalog

import (
	"context"
	"database/sql"
	"fmt"
)

// Cut is where one part of a Resource List ends: how many held resources
// it takes and the URI of the last of them.
type Cut struct {
	Entries int
	Last    string
}

// PlanResources cuts the held resources of collection, in URI order, into
// the parts of a Resource List: each part takes at most maxEntries
// resources whose SizeHint (fixed + refs*perRef) sums within budget, and
// at least one whatever its size, so that every resource lands in some
// part. It reads everything from one snapshot and also returns the
// sequence of the last event applied in that snapshot: every write moves
// it, so a plan made at seq is the plan of any later read that finds the
// same seq, which lets a caller keep it until the catalog changes. An
// empty collection has no cuts.
//
// Each part after the first starts from a guess, the previous part's
// entry count: a plain sum over slightly fewer entries than that, then a
// running sum over the few after it (see cutter.cut), so the whole plan
// walks the resources_held index little more than once.
func (c *Catalog) PlanResources(ctx context.Context, collection string, maxEntries int, perRef, budget int64) (cuts []Cut, seq uint64, err error) {
	tx, err := c.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, 0, fmt.Errorf("plan resource list of collection %s: %w", collection, err)
	}
	defer tx.Rollback()
	var applied int64
	if err := tx.QueryRowContext(ctx, `SELECT seq FROM applied WHERE id = 1`).Scan(&applied); err != nil {
		return nil, 0, fmt.Errorf("plan resource list of collection %s: read last applied: %w", collection, err)
	}
	k := cutter{q: tx, collection: collection, maxEntries: maxEntries, perRef: perRef, budget: budget}
	after, guess := "", 0
	for {
		n, last, err := k.cut(ctx, after, guess)
		if err != nil {
			return nil, 0, err
		}
		if n == 0 {
			return cuts, uint64(applied), nil
		}
		cuts = append(cuts, Cut{Entries: n, Last: last})
		after, guess = last, n
	}
}

// rowQuerier is a pool or a transaction.
type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// cutter cuts the parts of one collection's Resource List on q.
type cutter struct {
	q              rowQuerier
	collection     string
	maxEntries     int
	perRef, budget int64
}

// cut takes the part after afterURI. With a guess of how many entries it
// holds (0 for none) below maxEntries, a plain sum over 1/64 fewer than
// the guess usually fits, and a running sum over the next few finds the
// end; when the guess proves wrong it walks as without one.
func (k *cutter) cut(ctx context.Context, afterURI string, guess int) (int, string, error) {
	if guess -= guess / 64; guess > 1 && guess < k.maxEntries {
		n, last, sum, err := k.sum(ctx, afterURI, guess)
		if err != nil {
			return 0, "", err
		}
		if sum <= k.budget {
			if n < guess {
				return n, last, nil // the rest of the collection fits
			}
			more, moreLast, err := k.extend(ctx, last, k.maxEntries-n, k.budget-sum, guess/32+64)
			if err != nil || more == 0 {
				return n, last, err
			}
			return n + more, moreLast, nil
		}
	}
	return k.walk(ctx, afterURI, k.maxEntries, k.budget, true)
}

// extend takes, after afterURI, at most room more entries within budget,
// trying a running sum over the next span of them first.
func (k *cutter) extend(ctx context.Context, afterURI string, room int, budget int64, span int) (int, string, error) {
	span = min(span, room)
	n, last, sum, err := k.running(ctx, afterURI, span, budget, false)
	if err != nil || n < span || n == room {
		return n, last, err
	}
	more, moreLast, err := k.walk(ctx, last, room-n, budget-sum, false)
	if err != nil || more == 0 {
		return n, last, err
	}
	return n + more, moreLast, nil
}

// walk takes, after afterURI, at most limit entries within budget (and the
// first whatever its size when first is set), knowing nothing of where the
// part ends. A running sum needs a window, which SQLite materialises at
// five times the cost of a plain sum, so the window only walks the end of
// the part: a plain sum over the next limit entries decides whether the
// budget ends the part at all, a second over the share of them that the
// average entry says fits (less a margin) takes the bulk, and the window
// finds the last few entries after it. Where the average misleads (the
// bulk alone overruns the budget), the window walks the whole part.
func (k *cutter) walk(ctx context.Context, afterURI string, limit int, budget int64, first bool) (int, string, error) {
	n, last, total, err := k.sum(ctx, afterURI, limit)
	if err != nil || n == 0 || total <= budget {
		return n, last, err
	}
	if n == 1 {
		if first {
			return 1, last, nil
		}
		return 0, "", nil
	}
	if bulk := int(int64(n) * (budget / 100 * cutShare) / total); bulk > 1 {
		b, bulkLast, sum, err := k.sum(ctx, afterURI, bulk)
		if err != nil {
			return 0, "", err
		}
		if sum <= budget {
			more, moreLast, _, err := k.running(ctx, bulkLast, limit-b, budget-sum, false)
			if err != nil || more == 0 {
				return b, bulkLast, err
			}
			return b + more, moreLast, nil
		}
	}
	n, last, _, err = k.running(ctx, afterURI, limit, budget, first)
	return n, last, err
}

// cutShare is the percentage of what the average entry says fits in a
// part that walk takes by a plain sum.
const cutShare = 97

// sum counts and sums the SizeHint of the next limit held resources after
// afterURI, with the URI of the last one.
func (k *cutter) sum(ctx context.Context, afterURI string, limit int) (n int, last string, sum int64, err error) {
	var (
		lastURI sql.NullString
		total   sql.NullInt64
	)
	err = k.q.QueryRowContext(ctx, `SELECT count(*), max(uri), sum(n) FROM (
			SELECT uri, est + est_refs * ? AS n FROM resources INDEXED BY resources_held
			WHERE collection = ? AND uri > ? AND deleted = 0 ORDER BY uri LIMIT ?)`,
		k.perRef, k.collection, afterURI, limit).Scan(&n, &lastURI, &total)
	if err != nil {
		return 0, "", 0, fmt.Errorf("cut resources of collection %s after %q: %w", k.collection, afterURI, err)
	}
	return n, lastURI.String, total.Int64, nil
}

// running takes, of the next limit held resources after afterURI, those
// whose running sum stays within budget, and the first whatever its size
// when first is set; it returns how many, the last URI and their sum. The
// window has no ORDER BY of its own: its rows come in the subquery's URI
// order, and sorting them again cost more than the walk.
func (k *cutter) running(ctx context.Context, afterURI string, limit int, budget int64, first bool) (n int, last string, sum int64, err error) {
	if limit <= 0 {
		return 0, "", 0, nil
	}
	var (
		lastURI sql.NullString
		total   sql.NullInt64
	)
	err = k.q.QueryRowContext(ctx, `SELECT count(*), max(uri), max(run) FROM (
			SELECT uri, row_number() OVER w AS i, sum(n) OVER w AS run FROM (
				SELECT uri, est + est_refs * ? AS n FROM resources INDEXED BY resources_held
				WHERE collection = ? AND uri > ? AND deleted = 0 ORDER BY uri LIMIT ?)
			WINDOW w AS (ROWS UNBOUNDED PRECEDING))
		WHERE (? AND i = 1) OR run <= ?`, k.perRef, k.collection, afterURI, limit, first, budget).Scan(&n, &lastURI, &total)
	if err != nil {
		return 0, "", 0, fmt.Errorf("cut resources of collection %s after %q by size: %w", k.collection, afterURI, err)
	}
	return n, lastURI.String, total.Int64, nil
}
