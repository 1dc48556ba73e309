package queue

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
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

// Backlogs is Backlog with each Source's part of it: the messages on
// CHANGES that no worker has finished, in total and by subject
// (ChangeSubject of the Source). One request answers both.
func (q *Queue) Backlogs(ctx context.Context) (total uint64, bySubject map[string]uint64, err error) {
	s, err := q.js.Stream(ctx, StreamChanges)
	if err != nil {
		return 0, nil, fmt.Errorf("queue: stream %s: %w", StreamChanges, err)
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(changesPrefix+">"))
	if err != nil {
		return 0, nil, fmt.Errorf("queue: stream %s info by subject: %w", StreamChanges, err)
	}
	return info.State.Msgs, info.State.Subjects, nil
}
