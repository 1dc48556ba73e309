package queue

import (
	"context"
	"fmt"
)

// Backlog is the number of messages on CHANGES that no worker has
// finished: those waiting and those being handled. CHANGES is a work
// queue, so a message leaves it when it is acknowledged, and the stream's
// message count is the backlog. A message is one change or a group of up
// to GroupMax (a baseline's are full groups). The harvester reads it to
// stay a bounded distance ahead of the workers.
func (q *Queue) Backlog(ctx context.Context) (uint64, error) {
	// Opening the stream fetches its info: one request, read from the
	// handle's copy rather than asked for again.
	s, err := q.js.Stream(ctx, StreamChanges)
	if err != nil {
		return 0, fmt.Errorf("queue: stream %s info: %w", StreamChanges, err)
	}
	return s.CachedInfo().State.Msgs, nil
}

// Untaken is the number of messages on CHANGES (changes, or groups of
// them) that no worker has taken yet: more than a handful means every
// worker is busy and changes queue up behind them. It is the fetch
// consumer's count, which the server brings up to date a moment after
// each publish: right after a burst it may be a few short.
func (q *Queue) Untaken(ctx context.Context) (uint64, error) {
	ci, err := q.consumer.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("queue: read consumer %s state: %w", q.cfg.Consumer, err)
	}
	return ci.NumPending, nil
}
