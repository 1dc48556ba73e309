package queue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/viaduct-mirror/viaduct"
)

// ErrEventsGap means events the caller asked for are no longer in EVENTS
// (aged out or removed). The applier's catalog cannot be brought up to
// date from the stream and must be rebuilt; carrying on would silently
// miss changes.
var ErrEventsGap = errors.New("events missing from the stream")

// EventFunc applies one event. seq is its EVENTS sequence, the
// aggregator's global order; at is when it was stored, the aggregator's
// change time; ctx carries the publisher's trace context.
type EventFunc = func(ctx context.Context, seq uint64, at time.Time, ev *viaduct.Event) error

// Events delivers every event with sequence >= fromSeq, in stream order,
// to fn, and keeps delivering new ones as they are published. It returns
// when ctx is done (ctx.Err()) or fn fails (its error, wrapped). Each node
// calls it with the sequence after the last one its catalog applied, so a
// restart resumes exactly. If events from fromSeq on are no longer in the
// stream, Events returns ErrEventsGap. An event that does not decode stops delivery
// with an error naming its sequence: skipping it would corrupt the catalog.
func (q *Queue) Events(ctx context.Context, fromSeq uint64, fn EventFunc) error {
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{eventsPrefix + ">"}}
	if fromSeq > 1 {
		cfg.DeliverPolicy = jetstream.DeliverByStartSequencePolicy
		cfg.OptStartSeq = fromSeq
	}
	cons, err := q.js.OrderedConsumer(ctx, StreamEvents, cfg)
	if err != nil {
		return fmt.Errorf("queue: read %s from %d: %w", StreamEvents, fromSeq, err)
	}
	it, err := cons.Messages()
	if err != nil {
		return fmt.Errorf("queue: read %s from %d: %w", StreamEvents, fromSeq, err)
	}
	defer it.Stop()
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	expect := max(fromSeq, 1)
	for {
		msg, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, jetstream.ErrMsgIteratorClosed) {
				return fmt.Errorf("queue: %s reader stopped: %w", StreamEvents, err)
			}
			return fmt.Errorf("queue: read %s: %w", StreamEvents, err)
		}
		meta, err := msg.Metadata()
		if err != nil {
			return fmt.Errorf("queue: read metadata of %s message: %w", StreamEvents, err)
		}
		seq := meta.Sequence.Stream
		if seq != expect {
			return fmt.Errorf("queue: %s %d-%d: %w", StreamEvents, expect, seq-1, ErrEventsGap)
		}
		expect = seq + 1
		var ev viaduct.Event
		if err := ev.Decode(msg.Data()); err != nil {
			return fmt.Errorf("queue: decode event %d on %s: %w", seq, msg.Subject(), err)
		}
		if err := fn(q.extract(ctx, msg.Headers()), seq, meta.Timestamp, &ev); err != nil {
			return fmt.Errorf("queue: apply event %d (%s %s): %w", seq, ev.Op, ev.URI, err)
		}
	}
}

// LastEventSeq is the sequence of the newest event (0 when there is none):
// an applier that has applied it has caught up.
func (q *Queue) LastEventSeq(ctx context.Context) (uint64, error) {
	info, err := q.events.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("queue: read %s state: %w", StreamEvents, err)
	}
	return info.State.LastSeq, nil
}
