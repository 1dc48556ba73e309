package upstream

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the Client's Prometheus collectors. They exist even when no
// Registerer is given, so the code that counts never checks for nil.
type metrics struct {
	requests *prometheus.CounterVec
	retries  *prometheus.CounterVec
	bytes    *prometheus.CounterVec
	refused  *prometheus.CounterVec
	stalled  *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "viaduct", Subsystem: "upstream", Name: "requests_total",
			Help: "HTTP requests to upstream hosts, by host and status code (\"error\" when no response).",
		}, []string{"host", "code"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "viaduct", Subsystem: "upstream", Name: "retries_total",
			Help: "Attempts repeated after a transient failure, by host.",
		}, []string{"host"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "viaduct", Subsystem: "upstream", Name: "bytes_total",
			Help: "Body bytes read from upstream hosts (after decoding), by host.",
		}, []string{"host"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "viaduct", Subsystem: "upstream", Name: "refused_total",
			Help: "Requests or redirects refused by a Source's policy, by host.",
		}, []string{"host"}),
		stalled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "viaduct", Subsystem: "upstream", Name: "stalled_total",
			Help: "Bodies failed for arriving below min_body_rate, by host.",
		}, []string{"host"}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.requests, m.retries, m.bytes, m.refused, m.stalled} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("upstream: register metrics: %w", err)
		}
	}
	return m, nil
}
