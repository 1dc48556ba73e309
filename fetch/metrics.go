package fetch

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// metrics are the workers' counters, by Source. The other labels are
// closed sets (reasons, ops), never URIs, and Sources are the configured
// ones, so the number of series stays bounded.
type metrics struct {
	bytes     *prometheus.CounterVec // source
	fetched   *prometheus.CounterVec // source
	published *prometheus.CounterVec // source, op
	skipped   *prometheus.CounterVec // source, reason
	retried   *prometheus.CounterVec // source, reason
	dead      *prometheus.CounterVec // source, reason
	duration  *prometheus.HistogramVec
	inFlight  *prometheus.GaugeVec   // source
	parked    *prometheus.CounterVec // source
	handled   *prometheus.CounterVec // source
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	const ns, sub = "viaduct", "fetch"
	m := &metrics{
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "bytes_total",
			Help: "Bitstream bytes read from upstream hosts, verified or not."}, []string{"source"}),
		fetched: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "fetched_total",
			Help: "Bitstreams fetched, verified and stored."}, []string{"source"}),
		published: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "events_published_total",
			Help: "Events published on EVENTS, by op."}, []string{"source", "op"}),
		skipped: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "skipped_total",
			Help: "Changes handled without fetching, by reason."}, []string{"source", "reason"}),
		retried: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "retried_total",
			Help: "Changes handed back to the queue for a later delivery, by reason."}, []string{"source", "reason"}),
		dead: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "dead_lettered_total",
			Help: "Changes dead-lettered, by reason."}, []string{"source", "reason"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "duration_seconds",
			Help:    "Time to GET one bitstream into a temporary blob and verify it, successful or not; its commit (a sync round of the store) comes after, outside this time.",
			Buckets: prometheus.ExponentialBuckets(0.005, 4, 10)}, []string{"source"}),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "in_flight",
			Help: "Changes being handled now."}, []string{"source"}),
		handled: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "handled_total",
			Help: "Changes acknowledged: their effect, fetched or not, is durable."}, []string{"source"}),
		parked: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "parked_total",
			Help: "Changes set aside because every slot of their host was taken, for a worker to take up once one is free."}, []string{"source"}),
	}
	if reg == nil {
		return m, nil
	}
	var errs []error
	for _, c := range []prometheus.Collector{m.bytes, m.fetched, m.published, m.skipped, m.retried, m.dead, m.duration, m.inFlight, m.parked, m.handled} {
		errs = append(errs, reg.Register(c))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return m, nil
}

// Declare creates the series of each named Source at 0, so that a Source
// appears in the metrics before its first change is fetched. Series by
// reason appear with their first occurrence.
func (p *Pool) Declare(sources ...string) {
	for _, s := range sources {
		p.m.bytes.WithLabelValues(s)
		p.m.fetched.WithLabelValues(s)
		p.m.duration.WithLabelValues(s)
		p.m.inFlight.WithLabelValues(s)
		p.m.parked.WithLabelValues(s)
		p.m.handled.WithLabelValues(s)
		for _, op := range []string{resourcesync.Created, resourcesync.Updated, resourcesync.Deleted} {
			p.m.published.WithLabelValues(s, op)
		}
	}
}

// Progress reports how many of the Source's changes the workers have
// finished (acknowledged, fetched or not) and failed (dead-lettered) since
// the pool started: a baseline's progress lines compare them with what it
// queued.
func (p *Pool) Progress(source string) (finished, failed uint64) {
	return uint64(counterSum(p.m.handled, source)), uint64(counterSum(p.m.dead, source))
}

// counterSum adds up vec's counters whose first label is source.
func counterSum(vec *prometheus.CounterVec, source string) float64 {
	ch := make(chan prometheus.Metric, 64)
	go func() { vec.Collect(ch); close(ch) }()
	var sum float64
	for m := range ch {
		var d dto.Metric
		if m.Write(&d) != nil {
			continue
		}
		for _, l := range d.GetLabel() {
			if l.GetName() == "source" && l.GetValue() == source {
				sum += d.GetCounter().GetValue()
			}
		}
	}
	return sum
}
