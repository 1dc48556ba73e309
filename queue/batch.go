package queue

import (
	"context"
	"errors"
	"fmt"
	"strconv"
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
// server has stored every one of them, or the first error. Consecutive
// changes of one Source go into groups of up to GroupMax a message (see
// group.go); a change alone is a message of its own, de-duplicated by its
// MsgID exactly as PublishChange does, and a group by the ids of its
// changes, so that a batch queued again whole is stored once. The
// messages are sent without waiting for each acknowledgement in turn (the
// round trip per message is what caps one-at-a-time queueing), in order.
// When it returns an error some of the changes may be stored: a caller
// retries the whole batch and the duplicates are absorbed, so, as with
// PublishChange, it advances no cursor past a batch that failed.
func (q *Queue) PublishChanges(ctx context.Context, cs []*viaduct.Change) error {
	pending := make([]pendingPub, 0, min(len(cs), publishWindow))
	var firstErr error
	for len(cs) > 0 {
		n, data, err := cutGroup(cs)
		if err != nil {
			firstErr = fmt.Errorf("queue: %w", err)
			break
		}
		g := cs[:n]
		cs = cs[n:]
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
			firstErr = fmt.Errorf("queue: publish %s: %w", describe(g), err)
			break
		}
		p, err := q.publishChangesAsync(ctx, g, data)
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

// pendingPub is one message sent and not yet acknowledged: its future, or
// the acknowledgement of the synchronous fallback.
type pendingPub struct {
	cs   []*viaduct.Change
	f    jetstream.PubAckFuture
	ack  *jetstream.PubAck
	sent time.Time // when it was sent: its wait is bounded from then
}

// describe names what a message holds, for errors.
func describe(cs []*viaduct.Change) string {
	c := cs[0]
	if len(cs) == 1 {
		return fmt.Sprintf("change of %s (%s) from source %q", c.URI, c.Op, c.Source)
	}
	return fmt.Sprintf("group of %d changes from source %q, the first of %s (%s)", len(cs), c.Source, c.URI, c.Op)
}

// publishChangesAsync sends one change, or a group of them, encoded in
// data (cutGroup), without waiting for its acknowledgement. When the
// client refuses (too many publishes pending across the whole connection)
// it publishes that one message synchronously.
func (q *Queue) publishChangesAsync(ctx context.Context, cs []*viaduct.Change, data []byte) (pendingPub, error) {
	msg := nats.NewMsg(ChangeSubject(cs[0].Source))
	msg.Data = data
	id := cs[0].MsgID()
	if len(cs) > 1 {
		msg.Header.Set(HeaderChanges, strconv.Itoa(len(cs)))
		id = groupID(cs)
	}
	q.inject(ctx, msg.Header)
	f, err := q.js.PublishMsgAsync(msg, jetstream.WithMsgID(headerSafeID(id)), jetstream.WithExpectStream(StreamChanges))
	if err == nil {
		return pendingPub{cs: cs, f: f, sent: time.Now()}, nil
	}
	if !errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
		return pendingPub{}, fmt.Errorf("queue: publish %s: %w", describe(cs), err)
	}
	ack, err := q.publishMsg(ctx, StreamChanges, msg, id)
	if err != nil {
		return pendingPub{}, fmt.Errorf("queue: publish %s: %w", describe(cs), err)
	}
	return pendingPub{cs: cs, ack: ack}, nil
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
		return fmt.Errorf("queue: publish %s: no acknowledgement within %s: %w", describe(p.cs), q.publishTimeout(), ErrPublishTimeout)
	case ack := <-p.f.Ok():
		if ack.Duplicate {
			q.metrics.duplicates.WithLabelValues(StreamChanges).Inc()
		} else {
			q.metrics.published.WithLabelValues(StreamChanges).Inc()
		}
		return nil
	case err := <-p.f.Err():
		return fmt.Errorf("queue: publish %s: %w", describe(p.cs), err)
	case <-ctx.Done():
		return fmt.Errorf("queue: publish %s: %w", describe(p.cs), ctx.Err())
	}
}
