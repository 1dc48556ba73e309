package websub

import (
	"slices"
	"sync"
	"time"
)

// Relation is how a notification's interval stands to the previous one's
// on the same topic.
type Relation int

const (
	// First: no previous notification (or cursor) to compare with.
	First Relation = iota
	// Consecutive: from is the previous until; nothing was missed.
	Consecutive
	// Gap: from is after the previous until; what changed in between was
	// not notified, or its notification is late.
	Gap
	// Overlap: from is before the previous until and until after it.
	Overlap
	// OutOfOrder: the whole interval ends at or before the previous until:
	// a notification that arrived late, or twice.
	OutOfOrder
)

func (r Relation) String() string {
	return [...]string{"first", "consecutive", "gap", "overlap", "out-of-order"}[r]
}

// Classify compares a notification's from and until with the until of the
// one before it (zero: none). The spec asks consecutive notifications to
// cover consecutive, non-overlapping intervals; anything else is a reason
// to check the Change List.
func Classify(prevUntil, from, until time.Time) Relation {
	switch {
	case prevUntil.IsZero():
		return First
	case from.Equal(prevUntil):
		return Consecutive
	case from.After(prevUntil):
		return Gap
	case !until.After(prevUntil):
		return OutOfOrder
	}
	return Overlap
}

// Verdict is what a Tracker makes of one notification.
type Verdict struct {
	Relation Relation
	// CatchUp tells the caller to read the Change List from CatchUpFrom:
	// true for Gap, Overlap and OutOfOrder.
	CatchUp     bool
	CatchUpFrom time.Time
}

// Tracker remembers, per topic, the greatest until notified and when the
// last notification arrived, so that a caller learns what to catch up from
// the Change List and which hubs went quiet. It is safe for concurrent
// use.
type Tracker struct {
	clock Clock
	quiet time.Duration

	mu     sync.Mutex
	topics map[string]*track
}

type track struct {
	until time.Time // greatest until seen
	seen  time.Time // local time of the last notification (or Seed)
}

// NewTracker returns a Tracker that calls a topic quiet after no
// notification for longer than quiet (zero: never). clock nil means
// SystemClock.
func NewTracker(quiet time.Duration, clock Clock) *Tracker {
	if clock == nil {
		clock = SystemClock{}
	}
	return &Tracker{clock: clock, quiet: quiet, topics: map[string]*track{}}
}

// Seed sets topic's until from the caller's durable cursor, typically
// after a restart or a catch-up from the Change List that read up to
// until. It never moves the until back.
func (t *Tracker) Seed(topic string, until time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tr := t.get(topic)
	if until.After(tr.until) {
		tr.until = until
	}
}

// Observe records a notification on topic covering [from, until) and says
// whether the caller must catch up, and from when: the earlier of the
// previous until and this from, so that the Change List read covers both
// what may have been missed and the interval in question. The entries of
// the notification may be applied in every case: changes are
// de-duplicated downstream.
func (t *Tracker) Observe(topic string, from, until time.Time) Verdict {
	t.mu.Lock()
	defer t.mu.Unlock()
	tr := t.get(topic)
	v := Verdict{Relation: Classify(tr.until, from, until)}
	if v.Relation != First && v.Relation != Consecutive {
		v.CatchUp = true
		v.CatchUpFrom = tr.until
		if from.Before(v.CatchUpFrom) {
			v.CatchUpFrom = from
		}
	}
	if until.After(tr.until) {
		tr.until = until
	}
	return v
}

// Until is the greatest until seen on topic (zero: none).
func (t *Tracker) Until(topic string) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	if tr, ok := t.topics[topic]; ok {
		return tr.until
	}
	return time.Time{}
}

// Quiet lists the topics that had no notification (nor Seed) for longer
// than the quiet window: their hubs may have stopped delivering, so the
// caller should poll their Change Lists.
func (t *Tracker) Quiet() []string {
	if t.quiet <= 0 {
		return nil
	}
	now := t.clock.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for topic, tr := range t.topics {
		if now.Sub(tr.seen) > t.quiet {
			out = append(out, topic)
		}
	}
	slices.Sort(out)
	return out
}

// Forget drops topic, when its Source is removed.
func (t *Tracker) Forget(topic string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.topics, topic)
}

// get returns topic's track, created and marked seen now if new, and marks
// it seen; t.mu is held.
func (t *Tracker) get(topic string) *track {
	tr, ok := t.topics[topic]
	if !ok {
		tr = &track{}
		t.topics[topic] = tr
	}
	tr.seen = t.clock.Now()
	return tr
}
