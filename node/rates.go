package node

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// rateWindow keeps samples of a few counters over the last minutes, so
// that the status page says how fast the node works now: a count since
// the process started hides a node that stopped an hour ago.
type rateWindow struct {
	span time.Duration

	mu      sync.Mutex
	samples []rateSample // oldest first
}

type rateSample struct {
	at     time.Time
	values map[string]float64
}

func newRateWindow(span time.Duration) *rateWindow { return &rateWindow{span: span} }

// add records the counters' values at t. Samples older than the span are
// dropped, all but the newest of them, so that the window covers the span
// whole once it has run that long.
func (w *rateWindow) add(t time.Time, values map[string]float64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.samples = append(w.samples, rateSample{at: t, values: values})
	cut := 0
	for cut+1 < len(w.samples) && t.Sub(w.samples[cut+1].at) >= w.span {
		cut++
	}
	w.samples = w.samples[cut:]
}

// rate is key's increase per second from the oldest sample to the newest,
// and the time between them; ok is false until there are two samples. A
// key missing from the oldest sample (a counter not yet created) counts
// from zero; a counter that went down counts as no increase.
func (w *rateWindow) rate(key string) (perSecond float64, over time.Duration, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.samples) < 2 {
		return 0, 0, false
	}
	first, last := w.samples[0], w.samples[len(w.samples)-1]
	over = last.at.Sub(first.at)
	if over <= 0 {
		return 0, 0, false
	}
	return max(0, last.values[key]-first.values[key]) / over.Seconds(), over, true
}

// Keys of the rate window: what the fetch workers stored.
const (
	rateResources = "resources"
	rateBytes     = "bytes"
)

// rateCounters are the counters sampled, summed over their labels.
var rateCounters = map[string]string{
	"viaduct_fetch_fetched_total": rateResources,
	"viaduct_fetch_bytes_total":   rateBytes,
}

// Rates over rateSpan, sampled every rateEvery.
const (
	rateSpan  = 5 * time.Minute
	rateEvery = 5 * time.Second
)

// sampleRates adds a sample of the counters in g to w every interval
// until ctx ends.
func sampleRates(ctx context.Context, w *rateWindow, g prometheus.Gatherer, every time.Duration) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		w.add(time.Now(), gatherCounters(g))
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// gatherCounters sums each of rateCounters over its labels.
func gatherCounters(g prometheus.Gatherer) map[string]float64 {
	out := map[string]float64{}
	mfs, _ := g.Gather() // a partial answer still has the counters read
	for _, mf := range mfs {
		key, ok := rateCounters[mf.GetName()]
		if !ok {
			continue
		}
		for _, m := range mf.GetMetric() {
			out[key] += m.GetCounter().GetValue()
		}
	}
	return out
}
