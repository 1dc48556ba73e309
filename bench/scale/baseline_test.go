package main

import (
	"math"
	"testing"
)

// TestFifthRates: the rate over the first and last fifths of a run whose
// samples fall anywhere, and whose last interval is cut short.
func TestFifthRates(t *testing.T) {
	// 1,000 a second for 600 resources, then 500 a second for the last
	// 400; sampled every 0.25 s, and once more at the very end.
	var s []sample
	held := func(at float64) int64 {
		if at <= 0.6 {
			return int64(at * 1000)
		}
		return 600 + int64((at-0.6)*500)
	}
	for at := 0.25; at < 1.4; at += 0.25 {
		s = append(s, sample{t: at, held: held(at)})
	}
	s = append(s, sample{t: 1.4, held: 1000})
	first, last, ok := fifthRates(s)
	if !ok {
		t.Fatal("no rates")
	}
	if math.Abs(first-1000) > 1 || math.Abs(last-500) > 1 {
		t.Errorf("fifthRates = %.1f, %.1f; want 1000, 500", first, last)
	}
	if _, _, ok := fifthRates(s[:1]); ok {
		t.Error("a single sample gave rates")
	}
}
