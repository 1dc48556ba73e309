package queue

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/viaduct-mirror/viaduct"
)

// pollWait bounds one pull request, so that a cancelled context is noticed
// even on a server that never answers.
const pollWait = 5 * time.Second

// PullBatch is how many changes one pull may take when several are
// waiting: one round trip to the server then serves that many Next calls.
// It stays small, since a change taken waits in the stream's buffer with
// its ack timer running until a worker is free; the consumer's pending
// window (Config.MaxAckPending) counts them.
const PullBatch = 16

// pullGroups is how many messages one pull may take right after a group:
// a group is up to GroupMax changes, and the groups waiting behind it in
// the buffer have their ack timers running too.
const pullGroups = 2

// ChangeStream hands out changes from the shared CHANGES consumer. Any
// number of ChangeStreams, in any number of processes, share the work:
// each change goes to one worker at a time. One ChangeStream may serve
// many workers at once: it pulls up to PullBatch changes at a time and
// hands them out one by one.
type ChangeStream struct {
	q    *Queue
	cons jetstream.Consumer
	// turn is held (a token in a channel, so that waiting for it heeds
	// ctx) by the one Next that pulls or takes from buf.
	turn chan struct{}
	buf  []jetstream.Msg
	// members are the changes of groups already pulled, not yet handed
	// out; grouped says the last pull brought a group (and, until the
	// first pull, that one may come).
	members []*ChangeMsg
	grouped bool
}

// Changes returns a stream of changes for the workers of one process.
func (q *Queue) Changes(ctx context.Context) (*ChangeStream, error) {
	c, err := q.js.Consumer(ctx, StreamChanges, q.cfg.Consumer)
	if err != nil {
		return nil, fmt.Errorf("queue: open consumer %s on %s: %w", q.cfg.Consumer, StreamChanges, err)
	}
	s := &ChangeStream{q: q, cons: c, turn: make(chan struct{}, 1), grouped: true}
	s.turn <- struct{}{}
	return s, nil
}

// Next is NextBefore with ctx's deadline, if it has one.
func (s *ChangeStream) Next(ctx context.Context) (*ChangeMsg, error) {
	d, _ := ctx.Deadline()
	return s.NextBefore(ctx, d)
}

// NextBefore blocks until a change is available, deadline passes (the
// zero time: none) or ctx is done. A pull already sent to the server is
// waited for (up to pollWait) even past the deadline, so that nothing it
// brings is lost; only ctx's cancellation (a stop) ends it early. The
// deadline is a parameter of its own so that a caller's stop reaches a
// pull that outlived the caller's deadline: a context whose deadline has
// passed is done, and no later cancellation of its parent shows through
// it. A message that does not decode as a Change is dead-lettered with
// the decode error and skipped, so that a poison message never blocks the
// queue. It is safe to call from many goroutines.
func (s *ChangeStream) NextBefore(ctx context.Context, deadline time.Time) (*ChangeMsg, error) {
	var expired <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		expired = t.C
	}
	select {
	case <-s.turn:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-expired:
		return nil, context.DeadlineExceeded
	}
	defer func() { s.turn <- struct{}{} }()
	for {
		if len(s.members) > 0 {
			m := s.members[0]
			s.members[0] = nil
			s.members = s.members[1:]
			return m, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !deadline.IsZero() && !time.Now().Before(deadline) {
			return nil, context.DeadlineExceeded
		}
		msg, err := s.take(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if !deadline.IsZero() && !time.Now().Before(deadline) {
				return nil, context.DeadlineExceeded
			}
			if errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, jetstream.ErrNoMessages) {
				continue
			}
			return nil, fmt.Errorf("queue: fetch from %s: %w", StreamChanges, err)
		}
		if isGroup(msg.Headers()) {
			meta, err := msg.Metadata()
			if err != nil {
				return nil, fmt.Errorf("queue: read metadata of %s message: %w", StreamChanges, err)
			}
			if s.members, err = s.q.openGroup(msg, meta); err != nil {
				return nil, err
			}
			continue
		}
		m, err := s.q.newChangeMsg(msg)
		if err != nil {
			return nil, err
		}
		if m.Change != nil && m.wait > 0 {
			// Handed back out of a group with a delay: the server keeps it
			// for the rest of it.
			if err := msg.NakWithDelay(m.wait); err != nil {
				s.q.log.Warn("could not hold back a change handed back with a delay; it is handled now", "uri", m.Change.URI, "err", err)
				return m, nil
			}
			continue
		}
		if m.Change != nil {
			return m, nil
		}
		// Poison: m has been dead-lettered; fetch the next one.
	}
}

// take returns the next buffered message, else pulls: first whatever is
// waiting, up to PullBatch (pullGroups while the last pull brought a
// group), without waiting; when nothing is, one message, waiting up to
// pollWait for it.
func (s *ChangeStream) take(ctx context.Context) (jetstream.Msg, error) {
	if len(s.buf) == 0 {
		n := PullBatch
		if s.grouped {
			n = pullGroups
		}
		batch, err := s.cons.FetchNoWait(n)
		if err == nil {
			grouped := false
			for m := range batch.Messages() {
				s.buf = append(s.buf, m)
				grouped = grouped || isGroup(m.Headers())
			}
			if len(s.buf) > 0 {
				s.grouped = grouped
			}
			err = batch.Error()
		}
		// A failed batch pull loses nothing (whatever it delivered is
		// buffered, the rest stays on the stream) and the single pull
		// below reports a lasting failure; a transient one is only
		// logged, at debug level.
		if err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, nats.ErrTimeout) {
			s.q.log.Debug("batch pull from CHANGES failed; pulling one change", "err", err)
		}
	}
	if len(s.buf) > 0 {
		m := s.buf[0]
		s.buf[0] = nil
		s.buf = s.buf[1:]
		return m, nil
	}
	// The pull waits pollWait whatever deadline ctx has: nats.go asks the
	// server to deliver until a little before the context's deadline and
	// drops what arrives after it, and a message the server delivered
	// just before a short deadline (a worker's lot poll, on a loaded
	// machine) was lost to the client and came back only after the
	// consumer's ack wait, minutes later by the default backoff. Only a
	// cancellation (a stop) ends the pull early.
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pollWait)
	defer cancel()
	stop := context.AfterFunc(ctx, func() {
		if errors.Is(ctx.Err(), context.Canceled) {
			cancel()
		}
	})
	defer stop()
	m, err := s.cons.Next(jetstream.FetchContext(pctx))
	if err == nil {
		s.grouped = isGroup(m.Headers())
	}
	return m, err
}

// Release hands back, for immediate redelivery, the changes pulled and not
// yet given to a worker: the workers call it when they stop, so that those
// changes need not wait out their ack timers.
func (s *ChangeStream) Release() {
	<-s.turn
	defer func() { s.turn <- struct{}{} }()
	for _, m := range s.buf {
		m.Nak()
	}
	s.buf = nil
	for _, m := range s.members {
		if err := m.requeue(0); err != nil {
			// The group comes back whole after its ack wait.
			s.q.log.Warn("could not hand back a change of a group", "uri", m.Change.URI, "err", err)
		}
	}
	s.members = nil
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
	// Seq is the message's sequence on CHANGES (for a change of a group,
	// the group's).
	Seq uint64
	// Delivered counts deliveries, this one included (1 the first time);
	// a change handed back out of a group counts those it had there.
	Delivered uint64
	// Published is when the change was queued.
	Published time.Time

	q   *Queue
	msg jetstream.Msg // the change's message, or its group's
	// wait is how long a change handed back out of a group must still
	// wait (see notBefore).
	wait time.Duration
	// group, for a member of a group, counts the verdicts of its members;
	// member is its place there and raw its encoding.
	group   *changeGroup
	member  int
	raw     []byte
	settled atomic.Bool // its verdict is counted in group
}

func (q *Queue) newChangeMsg(msg jetstream.Msg) (*ChangeMsg, error) {
	meta, err := msg.Metadata()
	if err != nil {
		return nil, fmt.Errorf("queue: read metadata of %s message: %w", StreamChanges, err)
	}
	m := &ChangeMsg{Seq: meta.Sequence.Stream, Delivered: meta.NumDelivered, Published: meta.Timestamp, q: q, msg: msg}
	if h := msg.Headers(); h.Get(HeaderDeliveredBefore) != "" {
		m.wait, m.Delivered = notBefore(h, meta.NumDelivered)
	}
	var c viaduct.Change
	if err := c.Decode(msg.Data()); err != nil {
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

// Ack removes the change from the queue. It does not wait for the server
// to confirm: an ack is sent only once the change's effect is durable, so
// an ack that is lost (the connection dropped, the process stopped before
// the client flushed it) only means the change is delivered again after
// its ack wait, and a worker handling it again finds the blob or the
// catalog's copy and publishes, at most, an event the catalog absorbs. A
// confirmed ack cost a request and a reply per change, about a seventh of
// a two-core node's baseline ingest when it was measured. A change of a
// group counts as done there, and the group is acked with its last
// change. ctx is unused and kept for callers that pass one.
func (m *ChangeMsg) Ack(ctx context.Context) error {
	if m.group != nil {
		return m.settle()
	}
	if err := m.msg.Ack(); err != nil {
		return fmt.Errorf("queue: ack change %d (%s): %w", m.Seq, m.uri(), err)
	}
	return nil
}

// Nak asks for redelivery after delay (0: as soon as possible). A change
// of a group is queued again on its own, to be handled no earlier than
// delay from now, and counts as done in its group.
func (m *ChangeMsg) Nak(delay time.Duration) error {
	if m.group != nil {
		return m.requeue(delay)
	}
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
// For a change of a group it restarts the group's.
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
