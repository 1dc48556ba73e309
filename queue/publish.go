package queue

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/viaduct-mirror/viaduct"
)

// PublishChange queues one upstream change for the fetch workers. The
// same change published again within the duplicate window (a re-polled
// Change List, a notification and the list that records it) is stored
// once; that is not an error.
func (q *Queue) PublishChange(ctx context.Context, c *viaduct.Change) error {
	data, err := c.Encode()
	if err == nil {
		_, err = q.publish(ctx, StreamChanges, ChangeSubject(c.Source), c.MsgID(), data)
	}
	if err != nil {
		return fmt.Errorf("queue: publish change of %s (%s) from source %q: %w", c.URI, c.Op, c.Source, err)
	}
	return nil
}

// PublishEvent appends one change the aggregator made to EVENTS and
// returns its stream sequence. Events carry no de-duplication id: the
// same event published again (its worker crashed before acking its
// change, or two workers fetched one change) is stored again, and the
// catalog absorbs it, since its effect is already held (docs/design.md).
func (q *Queue) PublishEvent(ctx context.Context, e *viaduct.Event) (uint64, error) {
	data, err := e.Encode()
	var ack *jetstream.PubAck
	if err == nil {
		ack, err = q.publish(ctx, StreamEvents, EventSubject(e.Collection), "", data)
	}
	if err != nil {
		return 0, fmt.Errorf("queue: publish event for %s (%s) in collection %q: %w", e.URI, e.Op, e.Collection, err)
	}
	return ack.Sequence, nil
}

// publish stores data on subject with trace context in the headers and
// msgID, unless empty, as Nats-Msg-Id, and counts what happened.
func (q *Queue) publish(ctx context.Context, stream, subject, msgID string, data []byte) (*jetstream.PubAck, error) {
	msg := nats.NewMsg(subject)
	msg.Data = data
	q.inject(ctx, msg.Header)
	return q.publishMsg(ctx, stream, msg, msgID)
}

// publishMsg waits at most Config.PublishTimeout for the server's
// acknowledgement, whatever ctx allows: a pass's context may last an hour,
// and a publish that is never acknowledged (a lost connection, a full
// store) must fail so that the caller retries, not wait that hour.
func (q *Queue) publishMsg(ctx context.Context, stream string, msg *nats.Msg, msgID string) (*jetstream.PubAck, error) {
	d := q.publishTimeout()
	pctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	opts := []jetstream.PublishOpt{jetstream.WithExpectStream(stream)}
	if msgID != "" {
		opts = append(opts, jetstream.WithMsgID(headerSafeID(msgID)))
	}
	ack, err := q.js.PublishMsg(pctx, msg, opts...)
	if err != nil {
		if ctx.Err() == nil && pctx.Err() != nil {
			return nil, fmt.Errorf("no acknowledgement within %s: %w (%w)", d, ErrPublishTimeout, err)
		}
		return nil, err
	}
	if ack.Duplicate {
		q.metrics.duplicates.WithLabelValues(stream).Inc()
	} else {
		q.metrics.published.WithLabelValues(stream).Inc()
	}
	return ack, nil
}

// headerSafeID keeps a message id usable as a header value: an id with
// control characters (a URI read from a broken document) is replaced by
// its sha-256, which is just as stable.
func headerSafeID(id string) string {
	for i := 0; i < len(id); i++ {
		if id[i] < 0x20 || id[i] == 0x7f {
			sum := sha256.Sum256([]byte(id))
			return "sha256:" + hex.EncodeToString(sum[:])
		}
	}
	return id
}
