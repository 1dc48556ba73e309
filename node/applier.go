package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/storage/sqlite"
)

// applier keeps the node's catalog from EVENTS. It resumes at the sequence
// after the last one the catalog recorded, so a restart neither skips nor
// repeats an event: the catalog stores that sequence in the same
// transaction as the event's effect.
type applier struct {
	q   *queue.Queue
	cat *sqlite.Catalog
	log *slog.Logger
}

// run applies events until ctx ends.
func (a *applier) run(ctx context.Context) error {
	last, err := a.cat.LastApplied(ctx)
	if err != nil {
		return fmt.Errorf("applier: reading last applied sequence: %w", err)
	}
	a.log.Info("applier starting", "from_seq", last+1)
	err = a.q.Events(ctx, last+1, func(ctx context.Context, seq uint64, at time.Time, ev *viaduct.Event) error {
		err := a.cat.Apply(ctx, seq, at, ev)
		if errors.Is(err, sqlite.ErrInvalid) {
			// Retrying cannot help and stopping would stall every later
			// event: record it loudly and move past it.
			a.log.Error("applier: event refused by the catalog, skipped", "seq", seq, "source", ev.Source, "uri", ev.URI, "op", ev.Op, "err", err)
			return a.cat.Skip(ctx, seq)
		}
		if err != nil {
			return fmt.Errorf("applier: event %d (%s %s): %w", seq, ev.Op, ev.URI, err)
		}
		return nil
	})
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// caughtUp reports whether the catalog has applied every event published
// so far.
func caughtUp(ctx context.Context, q *queue.Queue, cat *sqlite.Catalog) (bool, error) {
	last, err := q.LastEventSeq(ctx)
	if err != nil {
		return false, err
	}
	applied, err := cat.LastApplied(ctx)
	if err != nil {
		return false, err
	}
	return applied >= last, nil
}
