package queue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/viaduct-mirror/viaduct"
)

// publishWindow bounds the asynchronous publishes one PublishChanges call
// keeps unacknowledged: past it the call waits for the oldest before
// sending more, so a long batch never outgrows the client's own limit of
// pending acks when several Sources queue at once.
const publishWindow = 512

// PublishChanges queues a batch of upstream changes and returns once the
// server has stored every one of them, or the first error. The changes are
// sent without waiting for each acknowledgement in turn (the round trip
// per change is what caps one-at-a-time queueing), in order, and each is
// de-duplicated by its MsgID exactly as PublishChange does. When it
// returns an error some of the changes may be stored: a caller retries
// the whole batch and the duplicates are absorbed, so, as with
// PublishChange, it advances no cursor past a batch that failed.
func (q *Queue) PublishChanges(ctx context.Context, cs []*viaduct.Change) error {
	pending := make([]pendingPub, 0, min(len(cs), publishWindow))
	var firstErr error
	for _, c := range cs {
		if len(pending) == publishWindow {
			if err := q.awaitPub(ctx, pending[0]); err != nil && firstErr == nil {
				firstErr = err
			}
			pending = pending[1:]
		}
		if firstErr != nil {
			break
		}
		if err := ctx.Err(); err != nil {
			firstErr = fmt.Errorf("queue: publish change of %s (%s) from source %q: %w", c.URI, c.Op, c.Source, err)
			break
		}
		p, err := q.publishChangeAsync(ctx, c)
		if err != nil {
			firstErr = err
			break
		}
		pending = append(pending, p)
	}
	for _, p := range pending {
		if err := q.awaitPub(ctx, p); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}

// pendingPub is one change sent and not yet acknowledged: its future, or
// the acknowledgement of the synchronous fallback.
type pendingPub struct {
	c    *viaduct.Change
	f    jetstream.PubAckFuture
	ack  *jetstream.PubAck
	sent time.Time // when it was sent: its wait is bounded from then
}

// publishChangeAsync sends one change without waiting for its
// acknowledgement. When the client refuses (too many publishes pending
// across the whole connection) it publishes that one synchronously.
func (q *Queue) publishChangeAsync(ctx context.Context, c *viaduct.Change) (pendingPub, error) {
	data, err := c.Encode()
	if err != nil {
		return pendingPub{}, fmt.Errorf("queue: encode change of %s from source %q: %w", c.URI, c.Source, err)
	}
	msg := nats.NewMsg(ChangeSubject(c.Source))
	msg.Data = data
	q.inject(ctx, msg.Header)
	id := headerSafeID(c.MsgID())
	f, err := q.js.PublishMsgAsync(msg, jetstream.WithMsgID(id), jetstream.WithExpectStream(StreamChanges))
	if err == nil {
		return pendingPub{c: c, f: f, sent: time.Now()}, nil
	}
	if !errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
		return pendingPub{}, fmt.Errorf("queue: publish change of %s (%s) from source %q: %w", c.URI, c.Op, c.Source, err)
	}
	ack, err := q.publishMsg(ctx, StreamChanges, msg, c.MsgID())
	if err != nil {
		return pendingPub{}, fmt.Errorf("queue: publish change of %s (%s) from source %q: %w", c.URI, c.Op, c.Source, err)
	}
	return pendingPub{c: c, ack: ack}, nil
}

// awaitPub waits for one change's acknowledgement and counts it. The
// wait ends queue.publish_timeout after the change was sent, so that a
// batch whose acknowledgements are all lost (a store that cannot be
// written) fails after one timeout, not one per change.
func (q *Queue) awaitPub(ctx context.Context, p pendingPub) error {
	if p.ack != nil {
		return nil // counted by publishMsg
	}
	t := time.NewTimer(max(0, q.publishTimeout()-time.Since(p.sent)))
	defer t.Stop()
	select {
	case <-t.C:
		return fmt.Errorf("queue: publish change of %s (%s) from source %q: no acknowledgement within %s: %w", p.c.URI, p.c.Op, p.c.Source, q.publishTimeout(), ErrPublishTimeout)
	case ack := <-p.f.Ok():
		if ack.Duplicate {
			q.metrics.duplicates.WithLabelValues(StreamChanges).Inc()
		} else {
			q.metrics.published.WithLabelValues(StreamChanges).Inc()
		}
		return nil
	case err := <-p.f.Err():
		return fmt.Errorf("queue: publish change of %s (%s) from source %q: %w", p.c.URI, p.c.Op, p.c.Source, err)
	case <-ctx.Done():
		return fmt.Errorf("queue: publish change of %s (%s) from source %q: %w", p.c.URI, p.c.Op, p.c.Source, ctx.Err())
	}
}
