package testutil

import (
	"testing"
	"time"
)

func TestEventuallyReturnsOnceTheConditionHolds(t *testing.T) {
	n := 0
	Eventually(t, 5*time.Second, "three polls", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Errorf("polled %d times, want 3", n)
	}
}

// fatalRecorder records Fatalf instead of ending the test.
type fatalRecorder struct {
	testing.TB
	failed bool
}

func (r *fatalRecorder) Helper() {}
func (r *fatalRecorder) Fatalf(string, ...any) {
	r.failed = true
	panic(r)
}

func TestEventuallyFailsAtTheDeadline(t *testing.T) {
	r := &fatalRecorder{TB: t}
	func() {
		defer func() {
			if p := recover(); p != nil && p != r {
				panic(p)
			}
		}()
		Eventually(r, 20*time.Millisecond, "never", func() bool { return false })
	}()
	if !r.failed {
		t.Error("Eventually returned without failing for a condition that never holds")
	}
}

func TestWhileProgressingWaitsForSlowWork(t *testing.T) {
	// Work that moves one step every 20ms, slower overall than the stall.
	start := time.Now()
	steps := func() int64 { return int64(time.Since(start) / (20 * time.Millisecond)) }
	WhileProgressing(t, 100*time.Millisecond, "ten steps", steps, func() bool { return steps() >= 10 })
}

func TestWhileProgressingFailsWhenWorkStops(t *testing.T) {
	r := &fatalRecorder{TB: t}
	func() {
		defer func() {
			if p := recover(); p != nil && p != r {
				panic(p)
			}
		}()
		WhileProgressing(r, 20*time.Millisecond, "stopped work", func() int64 { return 7 }, func() bool { return false })
	}()
	if !r.failed {
		t.Error("WhileProgressing returned without failing for work that never moves")
	}
}
