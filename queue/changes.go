package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/viaduct-mirror/viaduct"
)

// pollWait bounds one pull request, so that a cancelled context is noticed
// even on a server that never answers.
const pollWait = 5 * time.Second

// ChangeStream hands out changes from the shared CHANGES consumer. Any
// number of ChangeStreams, in any number of processes, share the work:
// each change goes to one worker at a time.
type ChangeStream struct {
	q    *Queue
	cons jetstream.Consumer
}

// Changes returns a stream of changes for one worker.
func (q *Queue) Changes(ctx context.Context) (*ChangeStream, error) {
	c, err := q.js.Consumer(ctx, StreamChanges, q.cfg.Consumer)
	if err != nil {
		return nil, fmt.Errorf("queue: open consumer %s on %s: %w", q.cfg.Consumer, StreamChanges, err)
	}
	return &ChangeStream{q: q, cons: c}, nil
}

// Next blocks until a change is available or ctx is done. A message that
// does not decode as a Change is dead-lettered with the decode error and
// skipped, so that a poison message never blocks the queue.
func (s *ChangeStream) Next(ctx context.Context) (*ChangeMsg, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pctx, cancel := context.WithTimeout(ctx, pollWait)
		msg, err := s.cons.Next(jetstream.FetchContext(pctx))
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
				// The deadline passed before the pull was sent.
				return nil, context.DeadlineExceeded
			}
			if errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, jetstream.ErrNoMessages) {
				continue
			}
			return nil, fmt.Errorf("queue: fetch from %s: %w", StreamChanges, err)
		}
		m, err := s.q.newChangeMsg(msg)
		if err != nil {
			return nil, err
		}
		if m.Change != nil {
			return m, nil
		}
		// Poison: m has been dead-lettered; fetch the next one.
	}
}

// ChangeMsg is one delivery of a change to a worker. The worker acks it
// only once the effect is durable (bitstream stored, event published);
// if it fails, it Naks. The contract on the last attempt: when
// LastAttempt() is true a failing worker calls DeadLetter instead of Nak,
// with the reason and evidence; a Nak on the last attempt leaves the change
// to the queue's own safety net, which dead-letters it with less evidence.
type ChangeMsg struct {
	// Change is the decoded message.
	Change *viaduct.Change
	// Seq is the message's sequence on CHANGES.
	Seq uint64
	// Delivered counts deliveries, this one included (1 the first time).
	Delivered uint64
	// Published is when the change was queued.
	Published time.Time

	q   *Queue
	msg jetstream.Msg
}

func (q *Queue) newChangeMsg(msg jetstream.Msg) (*ChangeMsg, error) {
	meta, err := msg.Metadata()
	if err != nil {
		return nil, fmt.Errorf("queue: read metadata of %s message: %w", StreamChanges, err)
	}
	m := &ChangeMsg{Seq: meta.Sequence.Stream, Delivered: meta.NumDelivered, Published: meta.Timestamp, q: q, msg: msg}
	var c viaduct.Change
	if err := json.Unmarshal(msg.Data(), &c); err != nil {
		reason := fmt.Sprintf("decode change: %v", err)
		q.log.Warn("dead-lettering undecodable change", "subject", msg.Subject(), "seq", m.Seq, "err", err)
		if err := m.DeadLetter(context.Background(), reason, nil); err != nil {
			return nil, err
		}
		return m, nil
	}
	m.Change = &c
	return m, nil
}

// LastAttempt reports whether this is the final delivery: a failure now
// must be dead-lettered, because the change will not come back.
func (m *ChangeMsg) LastAttempt() bool {
	return m.Delivered >= uint64(m.q.cfg.MaxDeliver)
}

// Context returns parent carrying the trace context the publisher sent.
func (m *ChangeMsg) Context(parent context.Context) context.Context {
	return m.q.extract(parent, m.msg.Headers())
}

// Ack removes the change from the queue and waits for the server to
// confirm it, so a change is never acked on a hope.
func (m *ChangeMsg) Ack(ctx context.Context) error {
	if err := m.msg.DoubleAck(ctx); err != nil {
		return fmt.Errorf("queue: ack change %d (%s): %w", m.Seq, m.uri(), err)
	}
	return nil
}

// Nak asks for redelivery after delay (0: as soon as possible).
func (m *ChangeMsg) Nak(delay time.Duration) error {
	var err error
	if delay > 0 {
		err = m.msg.NakWithDelay(delay)
	} else {
		err = m.msg.Nak()
	}
	if err != nil {
		return fmt.Errorf("queue: nak change %d (%s): %w", m.Seq, m.uri(), err)
	}
	return nil
}

// InProgress restarts the ack timer: a worker streaming a large bitstream
// calls it now and then so the change is not handed to another worker.
func (m *ChangeMsg) InProgress() error {
	if err := m.msg.InProgress(); err != nil {
		return fmt.Errorf("queue: extend change %d (%s): %w", m.Seq, m.uri(), err)
	}
	return nil
}

func (m *ChangeMsg) uri() string {
	if m.Change == nil {
		return m.msg.Subject()
	}
	return m.Change.URI
}
