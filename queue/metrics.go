package queue

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the counters an operator watches to see that nothing is lost:
// what was stored, what was recognised as a repeat, and what needs a human.
type metrics struct {
	published    *prometheus.CounterVec
	duplicates   *prometheus.CounterVec
	deadLettered *prometheus.CounterVec
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
	return m, nil
}
