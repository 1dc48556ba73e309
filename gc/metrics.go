package gc

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics count what collections reclaimed.
type metrics struct {
	blobs, bytes, tombstones, changes, packages prometheus.Counter
	runs                                        *prometheus.CounterVec // by result
	last                                        prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	const ns, sub = "viaduct", "gc"
	c := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: name, Help: help})
	}
	m := &metrics{
		blobs:      c("blobs_deleted_total", "Blobs deleted: unreferenced and idle for the grace period."),
		bytes:      c("bytes_deleted_total", "Bytes of the blobs deleted."),
		tombstones: c("tombstones_deleted_total", "Deleted resources and tombstones removed after the retention."),
		changes:    c("changes_deleted_total", "Change-log entries removed after the retention."),
		packages:   c("dump_packages_deleted_total", "Superseded dump packages deleted (each with its manifest copy)."),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "runs_total",
			Help: "Collections, by result: done, failed, or skipped (another node's turn)."}, []string{"result"}),
		last: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "last_success_timestamp_seconds",
			Help: "When the last collection on this node finished."}),
	}
	if reg == nil {
		return m, nil
	}
	var errs []error
	for _, col := range []prometheus.Collector{m.blobs, m.bytes, m.tombstones, m.changes, m.packages, m.runs, m.last} {
		errs = append(errs, reg.Register(col))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return m, nil
}
