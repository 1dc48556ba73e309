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

// ErrPublishTimeout is wrapped by the error of a publish whose
// acknowledgement did not come within Config.PublishTimeout.
var ErrPublishTimeout = errors.New("publish not acknowledged in time")

// PendingEvent is an event sent to EVENTS whose acknowledgement has not
// been awaited yet: the fetch workers go on with their next change while
// the server stores it, and ack the change only once Wait returns nil.
type PendingEvent struct {
	q   *Queue
	e   *viaduct.Event
	f   jetstream.PubAckFuture
	seq uint64
}

// PublishEventAsync sends one event to EVENTS without waiting for the
// server, with no de-duplication id, as PublishEvent. The event is
// durable only once the returned PendingEvent's Wait returns nil. When the
// client has too many publishes pending it publishes synchronously.
func (q *Queue) PublishEventAsync(ctx context.Context, e *viaduct.Event) (*PendingEvent, error) {
	data, err := e.Encode()
	if err != nil {
		return nil, fmt.Errorf("queue: publish event for %s (%s) in collection %q: %w", e.URI, e.Op, e.Collection, err)
	}
	msg := nats.NewMsg(EventSubject(e.Collection))
	msg.Data = data
	q.inject(ctx, msg.Header)
	f, err := q.js.PublishMsgAsync(msg, jetstream.WithExpectStream(StreamEvents))
	if err == nil {
		return &PendingEvent{q: q, e: e, f: f}, nil
	}
	if !errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
		return nil, fmt.Errorf("queue: publish event for %s (%s) in collection %q: %w", e.URI, e.Op, e.Collection, err)
	}
	pctx, cancel := context.WithTimeout(ctx, q.publishTimeout())
	defer cancel()
	ack, err := q.publishMsg(pctx, StreamEvents, msg, "")
	if err != nil {
		return nil, fmt.Errorf("queue: publish event for %s (%s) in collection %q: %w", e.URI, e.Op, e.Collection, err)
	}
	return &PendingEvent{q: q, e: e, seq: ack.Sequence}, nil
}

// Wait waits for the server to store the event and returns its stream
// sequence, or why it was not stored.
// It waits at most Config.PublishTimeout: an acknowledgement that never
// comes (a full store, a lost connection) is a failed publish, which the
// caller retries, never a wait for ever.
func (p *PendingEvent) Wait(ctx context.Context) (uint64, error) {
	if p.f == nil {
		return p.seq, nil
	}
	d := p.q.publishTimeout()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return 0, fmt.Errorf("queue: publish event for %s (%s) in collection %q: no acknowledgement within %s: %w", p.e.URI, p.e.Op, p.e.Collection, d, ErrPublishTimeout)
	case ack := <-p.f.Ok():
		p.q.metrics.published.WithLabelValues(StreamEvents).Inc()
		return ack.Sequence, nil
	case err := <-p.f.Err():
		return 0, fmt.Errorf("queue: publish event for %s (%s) in collection %q: %w", p.e.URI, p.e.Op, p.e.Collection, err)
	case <-ctx.Done():
		return 0, fmt.Errorf("queue: publish event for %s (%s) in collection %q: %w", p.e.URI, p.e.Op, p.e.Collection, ctx.Err())
	}
}

// publishTimeout is Config.PublishTimeout, or its default.
func (q *Queue) publishTimeout() time.Duration {
	if q.cfg.PublishTimeout > 0 {
		return q.cfg.PublishTimeout
	}
	return Defaults().PublishTimeout
}
