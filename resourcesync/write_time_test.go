package resourcesync

import (
	"testing"
	"time"
)

// TestAppendW3CMatchesLayout checks the hand-written formatter against the
// layout it replaces, at every fraction length, odd zones and years at the
// edges of the four-digit range and past them.
func TestAppendW3CMatchesLayout(t *testing.T) {
	zones := []*time.Location{time.UTC, time.FixedZone("", 5*3600+1800), time.FixedZone("", -11*3600)}
	var times []time.Time
	for _, y := range []int{-1, 0, 1, 999, 1970, 2024, 9999, 10000} {
		for _, ns := range []int{0, 1, 10, 120, 123400, 100000000, 999999999, 500000000, 123456789} {
			for _, z := range zones {
				times = append(times, time.Date(y, time.December, 31, 23, 59, 58, ns, z), time.Date(y, time.January, 1, 0, 0, 0, ns, z))
			}
		}
	}
	for _, tm := range times {
		want := string(appendTime([]byte("x"), tm))
		if got := string(appendW3C([]byte("x"), tm)); got != want {
			t.Errorf("appendW3C(%v) = %q, want %q", tm, got, want)
		}
	}
}

func BenchmarkAppendW3C(b *testing.B) {
	tm := time.Date(2024, 5, 1, 10, 0, 0, 123000000, time.UTC)
	buf := make([]byte, 0, 64)
	b.Run("layout", func(b *testing.B) {
		for b.Loop() {
			buf = appendTime(buf[:0], tm)
		}
	})
	b.Run("w3c", func(b *testing.B) {
		for b.Loop() {
			buf = appendW3C(buf[:0], tm)
		}
	})
}
