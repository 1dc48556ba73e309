package queue

import (
	"context"
	"fmt"
)

// ScanDeadLetters calls fn with each dead letter of source (empty: all)
// after sequence after, oldest first, until fn returns false. It stops at
// the stream's last sequence when it starts: a change queued again by fn
// that fails again while the scan runs is not seen a second time.
func (q *Queue) ScanDeadLetters(ctx context.Context, source string, after uint64, fn func(DeadLetter) bool) error {
	rctx, cancel := q.request(ctx)
	info, err := q.dead.Info(rctx)
	cancel()
	if err != nil {
		return fmt.Errorf("queue: read %s state: %w", StreamDead, err)
	}
	if info.State.Msgs == 0 || info.State.LastSeq <= after {
		return nil
	}
	return q.eachDeadLetter(ctx, source, after+1, info.State.LastSeq, fn)
}

// RequeueDeadLetter queues a dead letter already read (by ScanDeadLetters)
// again, as RetryDeadLetter does, without reading it a second time.
func (q *Queue) RequeueDeadLetter(ctx context.Context, d DeadLetter) error {
	return q.retry(ctx, d)
}

// DropDeadLetter removes a dead letter whose change no longer needs to be
// applied (the catalog has a later state of its resource). The reason is
// logged at debug level only: the caller reports a summary. A dead letter
// already gone (another node dropped or retried it) is ErrDeadLetterNotFound.
func (q *Queue) DropDeadLetter(ctx context.Context, d DeadLetter, reason string) error {
	if err := q.deleteDead(ctx, d.Seq); err != nil {
		if q.deadGone(ctx, d.Seq) {
			return fmt.Errorf("queue: drop dead letter %d (source %q): %w", d.Seq, d.Source, ErrDeadLetterNotFound)
		}
		return fmt.Errorf("queue: drop dead letter %d (source %q): %w", d.Seq, d.Source, err)
	}
	q.log.Debug("dead letter dropped", "source", d.Source, "seq", d.Seq, "reason", reason)
	return nil
}

// request bounds one request to the server as a publish is bounded
// (Config.PublishTimeout): dead letters are read and removed under a
// pass's context, which may last an hour, and a lost connection must fail
// the request, not hold the pass.
func (q *Queue) request(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, q.publishTimeout())
}

// deleteDead removes one dead letter, within one request's bound.
func (q *Queue) deleteDead(ctx context.Context, seq uint64) error {
	ctx, cancel := q.request(ctx)
	defer cancel()
	return q.dead.DeleteMsg(ctx, seq)
}
