package s3

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the store's counts of how small blobs reach the server.
type metrics struct {
	batches    *prometheus.CounterVec
	batchBlobs prometheus.Histogram
	batching   prometheus.GaugeFunc
	puts       prometheus.Counter
}

// The outcomes of a batch.
const (
	batchConfirmed = "confirmed" // unpacked, its md5 and last blob checked
	batchResent    = "resent"    // not confirmed: its blobs sent again one by one
)

// newMetrics makes the store's metrics; batching reports whether batches
// are on, read at each scrape.
func newMetrics(reg prometheus.Registerer, batching func() bool) (*metrics, error) {
	const ns, sub = "viaduct", "s3"
	m := &metrics{
		batches: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "batches_total",
			Help: "Batches of small blobs sent as one tar for the server to unpack, by outcome: confirmed, or resent blob by blob."}, []string{"outcome"}),
		batchBlobs: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "batch_blobs",
			Help: "Blobs per batch sent as one tar.", Buckets: prometheus.ExponentialBuckets(2, 2, 9)}),
		batching: prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "batching",
			Help: "1 while small blobs committed together go in batches, 0 when each goes in a PUT of its own (batch_puts off, or the server does not unpack them)."},
			func() float64 {
				if batching() {
					return 1
				}
				return 0
			}),
		puts: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "small_puts_total",
			Help: "Small blobs sent in a PUT of their own: committed alone, with batches off, or resent from a batch not confirmed."}),
	}
	for _, o := range []string{batchConfirmed, batchResent} {
		m.batches.WithLabelValues(o)
	}
	if reg == nil {
		return m, nil
	}
	var errs []error
	for _, c := range []prometheus.Collector{m.batches, m.batchBlobs, m.batching, m.puts} {
		errs = append(errs, reg.Register(c))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("s3: register metrics: %w", err)
	}
	return m, nil
}
