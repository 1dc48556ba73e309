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
