package websub

import (
	"time"
)

// wake makes the renewal loop look at its schedule again.
func (s *Subscriber) wake() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// loop sends each subscription's next subscribe request when it is due:
// a renewal at four fifths of the granted lease, or a new attempt, with
// backoff, when the last one failed or was not verified. It also forgets
// subscriptions whose unsubscription was never verified.
func (s *Subscriber) loop() {
	defer close(s.done)
	for {
		var due <-chan time.Time
		var t Timer
		if next, ok := s.nextDue(); ok {
			t = s.clock.NewTimer(next.Sub(s.clock.Now()))
			due = t.C()
		}
		select {
		case <-s.ctx.Done():
		case <-s.kick:
		case <-due:
		}
		if t != nil {
			t.Stop()
		}
		if s.ctx.Err() != nil {
			return
		}
		s.renewDue()
	}
}

// nextDue is the earliest scheduled request.
func (s *Subscriber) nextDue() (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var next time.Time
	for _, e := range s.subs {
		if !e.renewAt.IsZero() && (next.IsZero() || e.renewAt.Before(next)) {
			next = e.renewAt
		}
	}
	return next, !next.IsZero()
}

// renewDue sends the requests that are due. Until a renewal is verified
// the next attempt is scheduled after a backoff that doubles each time.
func (s *Subscriber) renewDue() {
	now := s.clock.Now()
	var todo []*subEntry
	s.mu.Lock()
	for id, e := range s.subs {
		if e.renewAt.IsZero() || e.renewAt.After(now) {
			continue
		}
		if e.State == Unsubscribing {
			delete(s.subs, id)
			continue
		}
		e.renewAt = now.Add(e.retry)
		e.retry = min(2*e.retry, s.cfg.RetryMax)
		todo = append(todo, e)
	}
	s.mu.Unlock()
	for _, e := range todo {
		if err := s.request(s.ctx, e, "subscribe"); err != nil {
			s.log.Warn("websub subscriber: renewal failed; will retry", "topic", e.Topic, "hub", e.Hub, "err", err)
		}
	}
}
