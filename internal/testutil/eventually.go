package testutil

import (
	"testing"
	"time"
)

// pollEvery is how often Eventually asks again: short enough not to slow
// a test down, long enough not to starve what it waits for on 2 cores.
const pollEvery = 5 * time.Millisecond

// Eventually polls cond until it holds, failing the test with what when d
// passes first. Tests wait with it, never with time.Sleep, so that a slow
// machine only makes them slower and a fast one does not wait for nothing.
func Eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", d, what)
		}
		<-tick.C
	}
}

// WhileProgressing polls done until it holds, failing the test with what
// when progress has not moved for stall. It is the wait for work whose
// length depends on the machine's load (a baseline of thousands of
// resources through several nodes): a busy machine makes the work slower,
// never the test red, while work that has stopped still fails it within
// stall. progress is any measure that moves while the work goes on, such
// as a count of events applied.
func WhileProgressing(t testing.TB, stall time.Duration, what string, progress func() int64, done func() bool) {
	t.Helper()
	last, moved := progress(), time.Now()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for !done() {
		if p := progress(); p != last {
			last, moved = p, time.Now()
		} else if time.Since(moved) > stall {
			t.Fatalf("waited for %s: no progress for %s (stopped at %d)", what, stall, last)
		}
		<-tick.C
	}
}
