package harvester

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the harvester's per-source gauges and counters, the numbers
// an operator watches to know that every Source keeps up.
type metrics struct {
	passes      *prometheus.CounterVec // source, result
	changes     *prometheus.CounterVec // source, op
	attempts    *prometheus.CounterVec // source: every PublishChange call
	errors      *prometheus.CounterVec // source, kind
	lastSuccess *prometheus.GaugeVec   // source
	cursorLag   *prometheus.GaugeVec   // source
	notify      *notifyMetrics
}

// Error kinds counted in viaduct_harvester_errors_total.
const (
	kindFetch          = "fetch"
	kindDocument       = "document"
	kindEntry          = "entry"
	kindForbiddenLoc   = "forbidden_loc"
	kindChronology     = "non_chronological"
	kindPublish        = "publish"
	kindCatalog        = "catalog"
	kindDiscovery      = "discovery"
	kindDeletesSkipped = "deletes_skipped"
)

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	opts := func(name, help string) prometheus.Opts {
		return prometheus.Opts{Namespace: "viaduct", Subsystem: "harvester", Name: name, Help: help}
	}
	m := &metrics{
		passes:      prometheus.NewCounterVec(prometheus.CounterOpts(opts("passes_total", "Passes over a Source, by result (ok or error).")), []string{"source", "result"}),
		changes:     prometheus.NewCounterVec(prometheus.CounterOpts(opts("changes_total", "Changes queued on CHANGES, by op.")), []string{"source", "op"}),
		attempts:    prometheus.NewCounterVec(prometheus.CounterOpts(opts("publish_attempts_total", "Calls to publish a change, re-publishes that the stream de-duplicates included.")), []string{"source"}),
		errors:      prometheus.NewCounterVec(prometheus.CounterOpts(opts("errors_total", "Errors met while harvesting, by kind.")), []string{"source", "kind"}),
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts(opts("last_success_timestamp_seconds", "When the last successful pass over the Source ended.")), []string{"source"}),
		cursorLag:   prometheus.NewGaugeVec(prometheus.GaugeOpts(opts("cursor_lag_seconds", "Seconds between the Source's change cursor and now.")), []string{"source"}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.passes, m.changes, m.attempts, m.errors, m.lastSuccess, m.cursorLag} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	var err error
	if m.notify, err = newNotifyMetrics(reg); err != nil {
		return nil, err
	}
	return m, nil
}

// lag records how far the change cursor is behind the local clock.
func (m *metrics) lag(source string, cursor time.Time) {
	if cursor.IsZero() {
		return
	}
	m.cursorLag.WithLabelValues(source).Set(time.Since(cursor).Seconds())
}
