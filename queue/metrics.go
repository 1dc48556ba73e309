package queue

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the counters an operator watches to see that nothing is lost:
// what was stored, what was recognised as a repeat, and what needs a human;
// and the streams' depths, read at each scrape.
type metrics struct {
	published    *prometheus.CounterVec
	duplicates   *prometheus.CounterVec
	deadLettered *prometheus.CounterVec
	stats        *statsCache
	collector    *statsCollector
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		published: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "viaduct", Subsystem: "queue", Name: "published_total",
			Help: "Messages stored on a stream by this process.",
		}, []string{"stream"}),
		duplicates: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "viaduct", Subsystem: "queue", Name: "duplicates_total",
			Help: "Publishes JetStream recognised by Nats-Msg-Id and did not store again.",
		}, []string{"stream"}),
		deadLettered: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "viaduct", Subsystem: "queue", Name: "dead_lettered_total",
			Help: "Messages moved to the dead-letter stream, by the stream they came from.",
		}, []string{"stream"}),
		stats:     &statsCache{},
		collector: newStatsCollector(),
	}
	for _, s := range []string{StreamChanges, StreamEvents} {
		m.published.WithLabelValues(s)
		m.duplicates.WithLabelValues(s)
		m.deadLettered.WithLabelValues(s)
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []**prometheus.CounterVec{&m.published, &m.duplicates, &m.deadLettered} {
		if err := reg.Register(*c); err != nil {
			// A second queue on the same registry (a restart in one
			// process) shares the counters already there.
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return nil, err
			}
			existing, ok := are.ExistingCollector.(*prometheus.CounterVec)
			if !ok {
				return nil, err
			}
			*c = existing
		}
	}
	if err := reg.Register(m.collector); err != nil {
		var are prometheus.AlreadyRegisteredError
		existing, ok := are.ExistingCollector.(*statsCollector)
		if !errors.As(err, &are) || !ok {
			return nil, err
		}
		m.collector = existing // reports the newest queue from now on
	}
	return m, nil
}

// statsCollector reports the streams' depths at each scrape, from
// Queue.Stats: while NATS is away it keeps reporting the last figures
// read, marked stale, rather than dropping the series.
type statsCollector struct {
	q atomic.Pointer[Queue]

	connected, stale, updated                           *prometheus.Desc
	changes, pending, ackPending, redelivered, dead, ev *prometheus.Desc
}

func newStatsCollector() *statsCollector {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName("viaduct", "queue", name), help, nil, nil)
	}
	return &statsCollector{
		connected:   d("connected", "1 while the node's NATS connection is up, else 0."),
		stale:       d("stats_stale", "1 when the stream figures below could not be read at this scrape and are the last ones read, else 0."),
		updated:     d("stats_updated_timestamp_seconds", "When (unix seconds) the stream figures were last read from the server; 0 if never."),
		changes:     d("changes_messages", "Messages on CHANGES (a change, or a group of up to 32): waiting for a worker plus being handled."),
		pending:     d("changes_pending", "Messages on CHANGES (a change, or a group of up to 32) that no worker has taken yet."),
		ackPending:  d("changes_ack_pending", "Messages on CHANGES (a change, or a group of up to 32) taken by a worker and not yet acknowledged."),
		redelivered: d("changes_redelivered", "Messages on CHANGES delivered more than once and not yet acknowledged (retries, workers that died)."),
		dead:        d("deadletter_messages", "Messages on DEADLETTER, waiting for an operator."),
		ev:          d("events_last_seq", "Sequence of the newest event on EVENTS."),
	}
}

// watch makes c report q.
func (m *metrics) watch(q *Queue) { m.collector.q.Store(q) }

func (c *statsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.connected, c.stale, c.updated, c.changes, c.pending, c.ackPending, c.redelivered, c.dead, c.ev} {
		ch <- d
	}
}

func (c *statsCollector) Collect(ch chan<- prometheus.Metric) {
	q := c.q.Load()
	if q == nil {
		return
	}
	s, err := q.Stats(context.Background())
	gauge := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	gauge(c.connected, b2f(q.nc.IsConnected()))
	gauge(c.stale, b2f(err != nil))
	var updated float64
	if !s.Read.IsZero() {
		updated = float64(s.Read.UnixNano()) / 1e9
	}
	gauge(c.updated, updated)
	gauge(c.changes, float64(s.ChangesMessages))
	gauge(c.pending, float64(s.ChangesPending))
	gauge(c.ackPending, float64(s.ChangesAckPending))
	gauge(c.redelivered, float64(s.ChangesRedelivered))
	gauge(c.dead, float64(s.DeadLetters))
	gauge(c.ev, float64(s.EventsLastSeq))
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
