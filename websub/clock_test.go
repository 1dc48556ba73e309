package websub

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// fakeClock is a Clock that moves only when a test advances it.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	fc *fakeClock
	c  chan time.Time
	at time.Time
	d  time.Duration
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) NewTimer(d time.Duration) Timer {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := &fakeTimer{fc: f, c: make(chan time.Time, 1), at: f.now.Add(d), d: d}
	if d <= 0 {
		t.c <- f.now
		return t
	}
	f.timers = append(f.timers, t)
	return t
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	t.fc.mu.Lock()
	defer t.fc.mu.Unlock()
	i := slices.Index(t.fc.timers, t)
	if i < 0 {
		return false
	}
	t.fc.timers = slices.Delete(t.fc.timers, i, i+1)
	return true
}

// Advance moves the clock by d and fires the timers that are due.
func (f *fakeClock) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
	live := f.timers[:0]
	for _, t := range f.timers {
		if t.at.After(f.now) {
			live = append(live, t)
			continue
		}
		t.c <- f.now
	}
	f.timers = live
}

// hasTimer reports whether a timer of duration d is armed.
func (f *fakeClock) hasTimer(d time.Duration) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.ContainsFunc(f.timers, func(t *fakeTimer) bool { return t.d == d })
}

// waitTimer waits until a timer of duration d is armed.
func (f *fakeClock) waitTimer(t *testing.T, d time.Duration) {
	t.Helper()
	eventually(t, "a timer of "+d.String(), func() bool { return f.hasTimer(d) })
}

// eventually polls cond until it holds or five seconds pass.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}
