package node

import (
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func TestRateWindow(t *testing.T) {
	w := newRateWindow(time.Minute)
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if _, _, ok := w.rate("n"); ok {
		t.Fatal("a rate without samples")
	}
	w.add(t0, map[string]float64{})
	if _, _, ok := w.rate("n"); ok {
		t.Fatal("a rate from one sample")
	}
	// 10 a second for the first minute (the counter appears after the
	// first sample), then 1 a second.
	for i := 1; i <= 6; i++ {
		w.add(t0.Add(time.Duration(i)*10*time.Second), map[string]float64{"n": float64(100 * i)})
	}
	if r, over, _ := w.rate("n"); r != 10 || over != time.Minute {
		t.Errorf("after a minute at 10/s: %v/s over %v", r, over)
	}
	for i := 1; i <= 6; i++ {
		w.add(t0.Add(time.Minute+time.Duration(i)*10*time.Second), map[string]float64{"n": float64(600 + 10*i)})
	}
	if r, over, _ := w.rate("n"); math.Abs(r-1) > 1e-9 || over != time.Minute {
		t.Errorf("a minute at 1/s after a minute at 10/s: %v/s over %v (the old minute must have left the window)", r, over)
	}
	w.add(t0.Add(2*time.Minute+10*time.Second), map[string]float64{"n": 0})
	if r, _, _ := w.rate("n"); r != 0 {
		t.Errorf("a counter that went down: %v/s", r)
	}
	if r, _, ok := w.rate("other"); !ok || r != 0 {
		t.Errorf("a counter never seen: %v/s, %v", r, ok)
	}
}

func TestGatherCounters(t *testing.T) {
	reg := prometheus.NewRegistry()
	fetched := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "viaduct_fetch_fetched_total"}, []string{"source"})
	other := prometheus.NewCounter(prometheus.CounterOpts{Name: "viaduct_other_total"})
	reg.MustRegister(fetched, other)
	fetched.WithLabelValues("a").Add(3)
	fetched.WithLabelValues("b").Add(4)
	other.Add(100)
	got := gatherCounters(reg)
	if got[rateResources] != 7 || got[rateBytes] != 0 || len(got) != 1 {
		t.Errorf("gathered %v, want resources 7 summed over the Sources and nothing else", got)
	}
}
