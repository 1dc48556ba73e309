package websub

import (
	"context"
	"go.opentelemetry.io/otel/trace"
	"sync"
)

// Delivery is one notification queued for one subscriber.
type Delivery struct {
	// Seq is the delivery's place in its subscriber's queue, assigned by
	// the Outbox, increasing.
	Seq     uint64
	Topic   string
	Payload []byte
	// Links are the span contexts of the changes the delivery notifies
	// (see WithLinks), for its span.
	Links []trace.SpanContext
}

// Outbox queues deliveries per subscriber (by Subscription ID) so that
// they survive a restart: the Hub appends, reads the oldest unacknowledged
// one, and acknowledges it once the subscriber took it (or refused it for
// good). Purge drops a subscriber's whole queue when its lease ends or it
// unsubscribes. A JetStream stream with one subject per subscriber fits it.
type Outbox interface {
	Append(ctx context.Context, sub string, d Delivery) error
	// Head returns the oldest unacknowledged delivery of sub; ok is false
	// when there is none.
	Head(ctx context.Context, sub string) (d Delivery, ok bool, err error)
	Ack(ctx context.Context, sub string, seq uint64) error
	Purge(ctx context.Context, sub string) error
}

// MemOutbox is an Outbox in memory, for tests. Like a store over the
// network, it fails a call whose context has ended.
type MemOutbox struct {
	mu     sync.Mutex
	seq    uint64
	queues map[string][]Delivery
}

var _ Outbox = (*MemOutbox)(nil)

// NewMemOutbox returns an empty MemOutbox.
func NewMemOutbox() *MemOutbox { return &MemOutbox{queues: map[string][]Delivery{}} }

// Append queues d for sub with the next sequence number.
func (m *MemOutbox) Append(ctx context.Context, sub string, d Delivery) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seq++
	d.Seq = m.seq
	m.queues[sub] = append(m.queues[sub], d)
	return nil
}

// Head returns the first queued delivery of sub.
func (m *MemOutbox) Head(ctx context.Context, sub string) (Delivery, bool, error) {
	if err := ctx.Err(); err != nil {
		return Delivery{}, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queues[sub]
	if len(q) == 0 {
		return Delivery{}, false, nil
	}
	return q[0], true, nil
}

// Ack removes the delivery seq of sub; acknowledging a delivery that is
// gone already is not an error.
func (m *MemOutbox) Ack(ctx context.Context, sub string, seq uint64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queues[sub]
	for i, d := range q {
		if d.Seq == seq {
			m.queues[sub] = append(q[:i:i], q[i+1:]...)
			break
		}
	}
	if len(m.queues[sub]) == 0 {
		delete(m.queues, sub)
	}
	return nil
}

// Purge drops every delivery queued for sub.
func (m *MemOutbox) Purge(ctx context.Context, sub string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.queues, sub)
	return nil
}

// Len is how many deliveries are queued for sub.
func (m *MemOutbox) Len(sub string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.queues[sub])
}
