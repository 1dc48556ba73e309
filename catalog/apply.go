package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/viaduct-mirror/viaduct"
)

// Applied is one EVENTS message as the applier read it: the stream
// sequence (the aggregator's order of changes), the stream timestamp (its
// change time) and the event.
type Applied struct {
	Seq   uint64
	At    time.Time
	Event *viaduct.Event
}

// Apply applies one event in its own transaction. See ApplyBatch.
func (c *Catalog) Apply(ctx context.Context, seq uint64, at time.Time, ev *viaduct.Event) error {
	return c.ApplyBatch(ctx, []Applied{{Seq: seq, At: at, Event: ev}})
}

// ApplyBatch applies events in one immediate transaction: each event's
// effect on the resource, its entry in the change log, and the sequence of
// the last one as the last applied. Events at or below the last applied
// sequence are skipped, so a redelivered burst changes nothing; the batch
// should be in stream order.
//
// An event whose effect equals what is held (the same sha-256, length and
// type of a resource already held, or a delete of a resource not held)
// advances the sequence but adds nothing to the change log, so no change
// is ever listed twice. Its upstream metadata (times, hashes, links) is
// still recorded, as the latest word of the Source.
//
// The log's op is the aggregator's, not the Source's: a resource that was
// not held becomes created, one that was becomes updated.
//
// A burst costs one commit instead of one per event, several times the
// throughput (see BenchmarkApply); the applier should pass what it has
// fetched, up to about a thousand events.
//
// Events are applied in stream order, but the Source's order decides:
// each resource row keeps the Source time of the last statement applied
// to it (the upstream change time, or a baseline list's at when later),
// and an event older than that, which a slow fetch worker published after
// a quicker one, is recorded as applied with no effect at all, not even
// on the upstream metadata, and nothing in the change log. At equal
// times a deletion outranks a copy, and of two copies the greater sha-256
// wins. A deletion of a resource the catalog has no row of leaves a
// tombstone: a row marked deleted with no copy, listed and counted
// nowhere, that only keeps the deletion's time so that an older creation
// arriving later is ignored; a newer one creates the resource as usual.
// Events without a Source time are applied in stream order and leave the
// row's time as it was.
//
// If any event is refused (ErrInvalid) or a write fails, nothing of the
// batch is applied; the applier can then apply the burst one by one to
// find and dead-letter the culprit.
func (c *Catalog) ApplyBatch(ctx context.Context, batch []Applied) error {
	if len(batch) == 0 {
		return nil
	}
	var a applier
	err := c.write(ctx, func(tx *sql.Tx) error {
		// The driver runs each statement given a context that can end
		// in a goroutine of its own, to interrupt it: that cost more
		// than the statement. A batch is short, so its statements run
		// without, and ctx is checked between events instead; an ended
		// ctx also rolls the transaction back (database/sql).
		a = applier{ctx: context.WithoutCancel(ctx), log: c.log, tx: tx, st: &c.stmts,
			colls: map[string]*collState{}, rows: map[rowKey]*rowState{},
			copyPack: packer{codes: true}, upPack: packer{codes: true}}
		var last uint64
		if err := a.stmt(c.stmts.appliedGet).QueryRowContext(a.ctx).Scan(&last); err != nil {
			return fmt.Errorf("read last applied: %w", err)
		}
		pending := make([]*Applied, 0, len(batch))
		for i := range batch {
			b := &batch[i]
			if b.Seq <= last {
				c.log.Debug("event already applied", "seq", b.Seq, "last_applied", last)
				continue
			}
			if err := validate(b.Event); err != nil {
				return eventError(b, err)
			}
			pending = append(pending, b)
			last = b.Seq
		}
		if len(pending) == 0 {
			return nil
		}
		if err := a.load(pending); err != nil {
			return err
		}
		// Sized once: grown event by event they were half of what a
		// batch allocated.
		a.logged = make([]any, 0, len(pending)*logColCount)
		a.args = make([]any, 0, len(a.order)*resColCount)
		for _, b := range pending {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := a.apply(b); err != nil {
				return eventError(b, err)
			}
		}
		if err := a.flush(); err != nil {
			return err
		}
		if _, err := a.stmt(c.stmts.appliedPut).ExecContext(a.ctx, int64(last)); err != nil {
			return fmt.Errorf("record last applied %d: %w", last, err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("apply events %d..%d to catalog: %w", batch[0].Seq, batch[len(batch)-1].Seq, err)
	}
	c.outranked.Add(uint64(a.stale))
	return nil
}

// eventError says which event err is about.
func eventError(b *Applied, err error) error {
	ev := b.Event
	if ev == nil {
		return fmt.Errorf("event %d: %w", b.Seq, err)
	}
	return fmt.Errorf("event %d (collection %s, uri %s, %s): %w", b.Seq, ev.Collection, ev.URI, ev.Op, err)
}

// Outranked is the number of events applied since the catalog was opened
// that had no effect because the catalog already recorded a later
// statement of the Source about their resource (see ApplyBatch): how
// often events arrive out of the Source's order.
func (c *Catalog) Outranked() uint64 { return c.outranked.Load() }

// Skip records seq as applied without any effect: the applier calls it for
// an event it has dead-lettered, so that the catalog moves past it.
func (c *Catalog) Skip(ctx context.Context, seq uint64) error {
	err := c.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.StmtContext(ctx, c.stmts.appliedPut).ExecContext(ctx, int64(seq))
		return err
	})
	if err != nil {
		return fmt.Errorf("skip event %d: %w", seq, err)
	}
	c.log.Warn("event skipped", "seq", seq)
	return nil
}

// LastApplied is the sequence of the last EVENTS message applied (or
// skipped), 0 for a new catalog: the applier resumes after it.
func (c *Catalog) LastApplied(ctx context.Context) (uint64, error) {
	var seq int64
	if err := c.reads.lastApplied.QueryRowContext(ctx).Scan(&seq); err != nil {
		return 0, fmt.Errorf("read last applied: %w", err)
	}
	return uint64(seq), nil
}
