package websub

import (
	"slices"
	"testing"
	"time"
)

func TestClassify(t *testing.T) {
	m := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Minute) }
	cases := []struct {
		prev, from, until time.Time
		want              Relation
	}{
		{time.Time{}, m(0), m(1), First},
		{m(1), m(1), m(2), Consecutive},
		{m(1), m(2), m(3), Gap},
		{m(2), m(1), m(3), Overlap},
		{m(3), m(1), m(2), OutOfOrder},
		{m(2), m(1), m(2), OutOfOrder}, // the same notification twice
		{m(2), m(2), m(2), Consecutive},
	}
	for _, c := range cases {
		if got := Classify(c.prev, c.from, c.until); got != c.want {
			t.Errorf("Classify(%v, %v, %v) = %v, want %v", c.prev, c.from, c.until, got, c.want)
		}
	}
}

func TestTracker(t *testing.T) {
	m := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Minute) }
	type step struct {
		from, until int
		rel         Relation
		catchUp     int // minute to catch up from; -1: none
	}
	cases := []struct {
		name  string
		steps []step
		until int
	}{
		{"consecutive", []step{{0, 1, First, -1}, {1, 2, Consecutive, -1}, {2, 3, Consecutive, -1}}, 3},
		{"dropped one", []step{{0, 1, First, -1}, {2, 3, Gap, 1}, {3, 4, Consecutive, -1}}, 4},
		{"two out of order", []step{{0, 1, First, -1}, {2, 3, Gap, 1}, {1, 2, OutOfOrder, 1}, {3, 4, Consecutive, -1}}, 4},
		{"overlap", []step{{0, 2, First, -1}, {1, 3, Overlap, 1}, {3, 4, Consecutive, -1}}, 4},
		{"duplicate", []step{{0, 1, First, -1}, {1, 2, Consecutive, -1}, {1, 2, OutOfOrder, 1}}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := NewTracker(0, newFakeClock())
			for i, s := range c.steps {
				v := tr.Observe("topic", m(s.from), m(s.until))
				if v.Relation != s.rel || v.CatchUp != (s.catchUp >= 0) || (s.catchUp >= 0 && !v.CatchUpFrom.Equal(m(s.catchUp))) {
					t.Fatalf("step %d [%d, %d): %+v, want %v catching up from %d", i, s.from, s.until, v, s.rel, s.catchUp)
				}
			}
			if got := tr.Until("topic"); !got.Equal(m(c.until)) {
				t.Fatalf("until %v, want minute %d", got, c.until)
			}
		})
	}
}

func TestTrackerSeedAndTopics(t *testing.T) {
	tr := NewTracker(0, nil)
	tr.Seed("a", t0)
	if v := tr.Observe("a", t0.Add(time.Minute), t0.Add(2*time.Minute)); v.Relation != Gap || !v.CatchUpFrom.Equal(t0) {
		t.Fatalf("after Seed: %+v", v)
	}
	tr.Seed("a", t0) // never back
	if !tr.Until("a").Equal(t0.Add(2 * time.Minute)) {
		t.Fatal("Seed moved the until back")
	}
	if v := tr.Observe("b", t0, t0.Add(time.Minute)); v.Relation != First {
		t.Fatalf("topics are not independent: %+v", v)
	}
	tr.Forget("a")
	if !tr.Until("a").IsZero() {
		t.Fatal("Forget kept the topic")
	}
}

func TestTrackerQuiet(t *testing.T) {
	clock := newFakeClock()
	tr := NewTracker(10*time.Minute, clock)
	tr.Observe("a", t0, t0.Add(time.Minute))
	tr.Seed("b", t0)
	clock.Advance(6 * time.Minute)
	tr.Observe("b", t0, t0.Add(time.Minute))
	if q := tr.Quiet(); len(q) != 0 {
		t.Fatalf("quiet too early: %v", q)
	}
	clock.Advance(5 * time.Minute)
	if q := tr.Quiet(); !slices.Equal(q, []string{"a"}) {
		t.Fatalf("quiet %v, want [a]", q)
	}
	clock.Advance(10 * time.Minute)
	if q := tr.Quiet(); !slices.Equal(q, []string{"a", "b"}) {
		t.Fatalf("quiet %v, want [a b]", q)
	}
}
