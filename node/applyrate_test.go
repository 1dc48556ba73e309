package node

import (
	"testing"
	"time"
)

// keptShare is the least share of its calm apply rate a node keeps during
// and after a slow or hostile peer (docs/security.md): generous, since the
// machine running the tests is busy.
const keptShare = 0.25

// checkRateKept fails the test when rate, measured in the phase named
// when, is under keptShare of calm.
func checkRateKept(t testing.TB, when string, rate, calm float64) {
	t.Helper()
	if rate < keptShare*calm {
		t.Errorf("apply rate %s %.0f/s, under %.0f%% of the calm %.0f/s", when, rate, 100*keptShare, calm)
	}
}

// applyRate runs work (asking for passes) and returns the catalog's apply
// rate over it, in events a second: the events applied from work's start
// until the node has settled, over that time. The slow and hostile peer
// tests compare the rate during and after a fault with the same test's
// own calm phase, never with a figure fixed in advance, so that a busy
// machine slows both alike (docs/security.md states each fraction).
func applyRate(t testing.TB, n *Node, work func()) float64 {
	t.Helper()
	from, start := lastApplied(t, n), time.Now()
	work()
	waitSettled(t, n, 2*time.Minute)
	events := lastApplied(t, n) - from
	if events == 0 {
		t.Fatalf("no event applied while measuring the apply rate")
	}
	return float64(events) / time.Since(start).Seconds()
}
