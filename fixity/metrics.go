package fixity

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Results of checking one blob, the values of the result label.
const (
	resultOK         = "ok"         // the bytes hash to the key
	resultBad        = "bad"        // they do not: quarantined, repair asked
	resultMissing    = "missing"    // the catalog holds it, the store has no such blob: repair asked
	resultUnreadable = "unreadable" // the store failed to answer: tried again next pass
)

type metrics struct {
	bytes     prometheus.Counter
	checked   *prometheus.CounterVec // result
	repairs   prometheus.Counter
	pending   prometheus.Gauge
	lastPass  prometheus.Gauge
	passStart prometheus.Gauge
	budget    prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	const ns, sub = "viaduct", "fixity"
	m := &metrics{
		bytes: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "bytes_read_total",
			Help: "Bytes of blobs the fixity audit read back and hashed."}),
		checked: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "blobs_checked_total",
			Help: "Blobs the fixity audit checked, by result: ok, bad (bytes not hashing to the key; quarantined), missing (held by the catalog, not in the store), unreadable (the store failed; checked again next pass)."},
			[]string{"result"}),
		repairs: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "repairs_requested_total",
			Help: "Repair changes the fixity audit queued on CHANGES: one per resource whose copy was bad or missing."}),
		pending: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "repairs_pending",
			Help: "Bad or missing blobs whose repair was asked and is not yet back in the store."}),
		lastPass: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "last_complete_pass_timestamp_seconds",
			Help: "When this node's audit last finished a complete pass over the catalog's copies (Unix time); 0 before the first."}),
		passStart: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "pass_started_timestamp_seconds",
			Help: "When the pass under way, or the last one, began (Unix time); 0 before the first."}),
		budget: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "bytes_per_second",
			Help: "The audit's read budget (fixity.bytes_per_second); 0 when the audit is off."}),
	}
	for _, r := range []string{resultOK, resultBad, resultMissing, resultUnreadable} {
		m.checked.WithLabelValues(r) // every result is exported from the start, at 0
	}
	if reg == nil {
		return m, nil
	}
	var errs []error
	for _, c := range []prometheus.Collector{m.bytes, m.checked, m.repairs, m.pending, m.lastPass, m.passStart, m.budget} {
		errs = append(errs, reg.Register(c))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return m, nil
}
