package sim

import (
	"context"
	"sort"
	"time"
)

// Create adds n new resources and returns the changes.
func (s *Source) Create(n int) []Change { return s.apply(n, func() op { return opCreate }) }

// Update makes a new version of n live resources, chosen from the seed.
func (s *Source) Update(n int) []Change { return s.apply(n, func() op { return opUpdate }) }

// Delete deletes n live resources, chosen from the seed.
func (s *Source) Delete(n int) []Change { return s.apply(n, func() op { return opDelete }) }

// Mutate makes n changes of kinds drawn from Config.Mix.
func (s *Source) Mutate(n int) []Change { return s.apply(n, s.pick) }

// pick draws a kind of change; it runs under s.mu.
func (s *Source) pick() op {
	m := s.cfg.Mix
	total := m.Create + m.Update + m.Delete
	if total == 0 {
		return opUpdate
	}
	switch k := s.rng.IntN(total); {
	case k < m.Create:
		return opCreate
	case k < m.Create+m.Update:
		return opUpdate
	}
	return opDelete
}

// apply makes n changes under the lock, then reports them to OnChange in
// order. An update or deletion with no live resource left becomes a
// creation, so that n changes are always made.
func (s *Source) apply(n int, kind func() op) []Change {
	s.mu.Lock()
	out := make([]Change, 0, n)
	for range n {
		o := kind()
		if o != opCreate && s.live == 0 {
			o = opCreate
		}
		c := s.change(o)
		s.log = append(s.log, c)
		out = append(out, s.publicChange(&c))
	}
	s.gen++
	s.hookMu.Lock()
	s.mu.Unlock()
	defer s.hookMu.Unlock()
	if s.onChange != nil {
		for _, c := range out {
			s.onChange(c)
		}
	}
	return out
}

// change applies one change of kind o to the state; it runs under s.mu.
func (s *Source) change(o op) change {
	t := s.tick()
	var id int
	switch o {
	case opCreate:
		s.res = append(s.res, s.version(len(s.res)+1, 1, t))
		s.live++
		id = len(s.res)
	case opUpdate:
		id = s.randomLive()
		r := &s.res[id-1]
		*r = s.version(id, r.version+1, t)
	case opDelete:
		id = s.randomLive()
		s.res[id-1].deleted = true
		s.live--
	}
	r := &s.res[id-1]
	return change{time: t, id: int32(id), version: r.version, op: o, size: r.size, md5: r.md5, sha256: r.sha256}
}

// tick returns the time of a new change: the clock, moved on by a
// microsecond past the previous change when needed, so that change times
// strictly increase and (URI, datetime) is unique.
func (s *Source) tick() int64 {
	t := s.cfg.Now().UnixNano()
	t -= t % int64(time.Microsecond)
	if t <= s.last {
		t = s.last + int64(time.Microsecond)
	}
	s.last = t
	return t
}

// randomLive draws a live resource; it runs under s.mu with s.live > 0.
// Probing random ids is fast while most resources are live; otherwise it
// walks from a random start.
func (s *Source) randomLive() int {
	for range 16 {
		if i := s.rng.IntN(len(s.res)); !s.res[i].deleted {
			return i + 1
		}
	}
	start := s.rng.IntN(len(s.res))
	for k := range s.res {
		if i := (start + k) % len(s.res); !s.res[i].deleted {
			return i + 1
		}
	}
	panic("sim: no live resource although live > 0")
}

// ChangesSince returns the changes made strictly after t, in order.
func (s *Source) ChangesSince(t time.Time) []Change {
	s.mu.RLock()
	defer s.mu.RUnlock()
	tn := t.UnixNano()
	i := sort.Search(len(s.log), func(i int) bool { return s.log[i].time > tn })
	out := make([]Change, 0, len(s.log)-i)
	for j := i; j < len(s.log); j++ {
		out = append(out, s.publicChange(&s.log[j]))
	}
	return out
}

// Run makes changes at Config.Rate per second until ctx is done. With a
// rate of 0 it only waits.
func (s *Source) Run(ctx context.Context) error {
	if s.cfg.Rate == 0 {
		<-ctx.Done()
		return nil
	}
	every := time.Duration(float64(time.Second) / s.cfg.Rate)
	if every < time.Millisecond {
		every = time.Millisecond
	}
	per := max(1, int(s.cfg.Rate*every.Seconds()+0.5))
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			s.Mutate(per)
		}
	}
}
