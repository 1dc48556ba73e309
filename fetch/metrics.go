package fetch

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the workers' counters. Labels are closed sets (reasons,
// ops), never Source names or URIs, so their number stays bounded.
type metrics struct {
	bytes     prometheus.Counter
	fetched   prometheus.Counter
	published *prometheus.CounterVec // by op
	skipped   *prometheus.CounterVec // by reason
	retried   *prometheus.CounterVec // by reason
	dead      *prometheus.CounterVec // by reason
	duration  prometheus.Histogram
	inFlight  prometheus.Gauge
	parked    prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	const ns, sub = "viaduct", "fetch"
	m := &metrics{
		bytes: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "bytes_total",
			Help: "Bitstream bytes read from upstream hosts, verified or not."}),
		fetched: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "fetched_total",
			Help: "Bitstreams fetched, verified and stored."}),
		published: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "events_published_total",
			Help: "Events published on EVENTS, by op."}, []string{"op"}),
		skipped: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "skipped_total",
			Help: "Changes handled without fetching, by reason."}, []string{"reason"}),
		retried: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "retried_total",
			Help: "Changes handed back to the queue for a later delivery, by reason."}, []string{"reason"}),
		dead: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "dead_lettered_total",
			Help: "Changes dead-lettered, by reason."}, []string{"reason"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "duration_seconds",
			Help:    "Time to GET, store and verify one bitstream, successful or not.",
			Buckets: prometheus.ExponentialBuckets(0.005, 4, 10)}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "in_flight",
			Help: "Changes being handled now."}),
		parked: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "parked_total",
			Help: "Changes set aside because every slot of their host was taken, for a worker to take up once one is free."}),
	}
	if reg == nil {
		return m, nil
	}
	var errs []error
	for _, c := range []prometheus.Collector{m.bytes, m.fetched, m.published, m.skipped, m.retried, m.dead, m.duration, m.inFlight, m.parked} {
		errs = append(errs, reg.Register(c))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return m, nil
}
