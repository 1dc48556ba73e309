package queue

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Stats are the depths of the streams an operator watches: what waits for
// a worker, what keeps coming back, what needs a human, and how far the
// change log has gone.
type Stats struct {
	// ChangesMessages is the CHANGES backlog: changes waiting plus those
	// being handled (a work queue keeps a change until it is acked).
	ChangesMessages uint64
	// ChangesPending are changes no worker has taken yet.
	ChangesPending uint64
	// ChangesAckPending are changes taken and not yet acknowledged.
	ChangesAckPending uint64
	// ChangesRedelivered are changes delivered more than once and not yet
	// acknowledged: failures being retried, or workers that died.
	ChangesRedelivered uint64
	// DeadLetters is the number of messages on DEADLETTER.
	DeadLetters uint64
	// EventsLastSeq is the sequence of the newest event on EVENTS.
	EventsLastSeq uint64
	// Read is when these figures were read from the server; zero when
	// they never were.
	Read time.Time
}

// statsTimeout bounds one read of the figures, so a scrape never hangs on
// a server that does not answer.
const statsTimeout = 2 * time.Second

// statsFresh is how long figures just read are reused, so that the
// collectors of one scrape ask the server once.
const statsFresh = time.Second

// statsCache keeps the last figures read, which Stats returns while the
// server is away.
type statsCache struct {
	mu   sync.Mutex
	last Stats
}

// errDisconnected is returned with stale figures while the connection is
// down.
var errDisconnected = errors.New("queue: not connected to NATS")

// Stats reads the streams' figures from the server. When the server
// cannot be asked (disconnected, timed out) it returns the last figures
// read, whose Read time says how old they are, with the error: a depth
// that vanished while NATS is away would hide the very outage an operator
// needs to see.
func (q *Queue) Stats(ctx context.Context) (Stats, error) {
	c := q.metrics.stats
	c.mu.Lock()
	defer c.mu.Unlock()
	if !q.nc.IsConnected() {
		return c.last, errDisconnected
	}
	if !c.last.Read.IsZero() && time.Since(c.last.Read) < statsFresh {
		return c.last, nil
	}
	ctx, cancel := context.WithTimeout(ctx, statsTimeout)
	defer cancel()
	s, err := q.readStats(ctx)
	if err != nil {
		return c.last, err
	}
	c.last = s
	return s, nil
}

func (q *Queue) readStats(ctx context.Context) (Stats, error) {
	var s Stats
	ci, err := q.consumer.Info(ctx)
	if err != nil {
		return s, fmt.Errorf("queue: read consumer %s state: %w", q.cfg.Consumer, err)
	}
	s.ChangesPending = ci.NumPending
	s.ChangesAckPending = uint64(ci.NumAckPending)
	s.ChangesRedelivered = uint64(ci.NumRedelivered)
	for _, st := range []struct {
		name string
		set  func(msgs, last uint64)
	}{
		{StreamChanges, func(m, _ uint64) { s.ChangesMessages = m }},
		{StreamDead, func(m, _ uint64) { s.DeadLetters = m }},
		{StreamEvents, func(_, l uint64) { s.EventsLastSeq = l }},
	} {
		str, err := q.js.Stream(ctx, st.name)
		if err != nil {
			return s, fmt.Errorf("queue: read stream %s state: %w", st.name, err)
		}
		info := str.CachedInfo()
		st.set(info.State.Msgs, info.State.LastSeq)
	}
	s.Read = time.Now()
	return s, nil
}
