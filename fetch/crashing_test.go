package fetch

import (
	"context"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/queue"
)

// crashingEvents is the queue's store of events with a crash of the
// worker publishing around it: before an event is published (its blob
// committed, no event), or once it is stored (no ack). A crashed worker
// hangs, its change held and unacknowledged as a dead node leaves it,
// until the pool is stopped; the change then goes back to the queue, for
// the next pool to finish. It keeps the queue's asynchronous publishing,
// so the pool works as it does on a node.
type crashingEvents struct {
	*queue.Queue
	// before and after, when set, are asked about each event; true stands
	// for a crash there.
	before, after func(*viaduct.Event) bool
}

var _ AsyncPublisher = (*crashingEvents)(nil)

func (e *crashingEvents) PublishEvent(ctx context.Context, ev *viaduct.Event) (uint64, error) {
	if e.before != nil && e.before(ev) {
		return 0, hang(ctx)
	}
	seq, err := e.Queue.PublishEvent(ctx, ev)
	if err == nil && e.after != nil && e.after(ev) {
		return 0, hang(ctx)
	}
	return seq, err
}

func (e *crashingEvents) PublishEventAsync(ctx context.Context, ev *viaduct.Event) (*queue.PendingEvent, error) {
	if e.before != nil && e.before(ev) {
		return nil, hang(ctx)
	}
	if e.after == nil {
		return e.Queue.PublishEventAsync(ctx, ev)
	}
	// The crash comes once the event is stored: it is published in full
	// before after is asked.
	if _, err := e.Queue.PublishEvent(ctx, ev); err != nil {
		return nil, err
	}
	if e.after(ev) {
		return nil, hang(ctx)
	}
	// No crash: the worker waits for the event as usual, which JetStream
	// takes for the duplicate it is.
	return e.Queue.PublishEventAsync(ctx, ev)
}

// hang is a crashed worker: it returns only when the pool stops its work.
func hang(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}
