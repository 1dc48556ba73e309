package harvester

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// metrics are the harvester's per-source gauges and counters, the numbers
// an operator watches to know that every Source keeps up. Every series of
// a configured Source exists from start-up (at 0), so that an alert on a
// rate or an absence has something to compare with before the first
// event; docs/metrics.md says what each means and what to alert on.
type metrics struct {
	passes      *prometheus.CounterVec // source, result
	changes     *prometheus.CounterVec // source, op
	attempts    *prometheus.CounterVec // source: every PublishChange call
	errors      *prometheus.CounterVec // source, kind
	lastSuccess *prometheus.GaugeVec   // source
	lastPass    *prometheus.GaugeVec   // source
	cursors     *cursorCollector
	notify      *notifyMetrics
	dead        *prometheus.CounterVec // source, outcome
	tolerated   *prometheus.CounterVec // source, kind
	gaps        *prometheus.CounterVec // source, closed_by
}

// Error kinds counted in viaduct_harvester_errors_total.
const (
	kindFetch          = "fetch"
	kindDocument       = "document"
	kindEntry          = "entry"
	kindForbiddenLoc   = "forbidden_loc"
	kindPublish        = "publish"
	kindCatalog        = "catalog"
	kindDiscovery      = "discovery"
	kindDeletesSkipped = "deletes_skipped"
)

// errorKinds are the kinds whose series are created up front.
var errorKinds = []string{kindFetch, kindDocument, kindEntry, kindForbiddenLoc,
	kindPublish, kindCatalog, kindDiscovery, kindDeletesSkipped, kindDump, kindStore}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	opts := func(name, help string) prometheus.Opts {
		return prometheus.Opts{Namespace: "viaduct", Subsystem: "harvester", Name: name, Help: help}
	}
	m := &metrics{
		passes:      prometheus.NewCounterVec(prometheus.CounterOpts(opts("passes_total", "Passes over a Source, by result (ok or error).")), []string{"source", "result"}),
		changes:     prometheus.NewCounterVec(prometheus.CounterOpts(opts("changes_total", "Changes queued on CHANGES, by op.")), []string{"source", "op"}),
		attempts:    prometheus.NewCounterVec(prometheus.CounterOpts(opts("publish_attempts_total", "Calls to publish a change, re-publishes that the stream de-duplicates included.")), []string{"source"}),
		errors:      prometheus.NewCounterVec(prometheus.CounterOpts(opts("errors_total", "Errors met while harvesting, by kind.")), []string{"source", "kind"}),
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts(opts("last_success_timestamp_seconds", "When (unix seconds) the last successful pass over the Source ended; 0 before the first since start-up.")), []string{"source"}),
		lastPass:    prometheus.NewGaugeVec(prometheus.GaugeOpts(opts("last_pass_timestamp_seconds", "When (unix seconds) the last pass over the Source ended, successful or not; 0 before the first since start-up.")), []string{"source"}),
		cursors:     newCursorCollector(),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.passes, m.changes, m.attempts, m.errors, m.lastSuccess, m.lastPass, m.cursors} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	var err error
	if m.notify, err = newNotifyMetrics(reg); err != nil {
		return nil, err
	}
	if m.dead, err = newDeadLetterMetric(reg); err != nil {
		return nil, err
	}
	if m.tolerated, err = newToleratedMetric(reg); err != nil {
		return nil, err
	}
	if m.gaps, err = newGapMetric(reg); err != nil {
		return nil, err
	}
	return m, nil
}

// declare creates every series of a configured Source at 0.
func (m *metrics) declare(source string) {
	m.passes.WithLabelValues(source, "ok")
	m.passes.WithLabelValues(source, "error")
	for _, k := range toleranceKinds {
		m.tolerated.WithLabelValues(source, k)
	}
	for _, k := range gapKinds {
		m.gaps.WithLabelValues(source, k)
	}
	for _, op := range []string{resourcesync.Created, resourcesync.Updated, resourcesync.Deleted} {
		m.changes.WithLabelValues(source, op)
	}
	m.attempts.WithLabelValues(source)
	for _, k := range errorKinds {
		m.errors.WithLabelValues(source, k)
	}
	m.lastSuccess.WithLabelValues(source)
	m.lastPass.WithLabelValues(source)
	m.cursors.declare(source)
	m.notify.declare(source)
	declareDead(m.dead, source)
}

// ended records the end of a pass, successful or not.
func (m *metrics) ended(source string, ok bool) {
	result := "error"
	if ok {
		result = "ok"
		m.lastSuccess.WithLabelValues(source).SetToCurrentTime()
	}
	m.passes.WithLabelValues(source, result).Inc()
	m.lastPass.WithLabelValues(source).SetToCurrentTime()
}

// lag records the Source's change cursor (the Source's own time); the lag
// is worked out from it at each scrape, so it grows while passes fail.
func (m *metrics) lag(source string, cursor time.Time) {
	if cursor.IsZero() {
		return
	}
	m.cursors.set(source, cursor)
}

// cursorCollector reports each Source's change cursor as a timestamp and
// its distance from now, read at scrape time: a gauge set after each
// successful pass froze while passes failed, and the alert on it never
// fired.
type cursorCollector struct {
	ts, lag *prometheus.Desc
	now     func() time.Time

	mu      sync.Mutex
	cursors map[string]time.Time // zero: not known yet
}

func newCursorCollector() *cursorCollector {
	return &cursorCollector{
		ts: prometheus.NewDesc("viaduct_harvester_cursor_timestamp_seconds",
			"The Source's change cursor (unix seconds, the Source's own clock): changes up to it are queued. 0 until known.", []string{"source"}, nil),
		lag: prometheus.NewDesc("viaduct_harvester_cursor_lag_seconds",
			"Seconds between the Source's change cursor and now, worked out at scrape time; grows while passes fail. 0 until the cursor is known.", []string{"source"}, nil),
		now:     time.Now,
		cursors: map[string]time.Time{},
	}
}

func (c *cursorCollector) declare(source string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.cursors[source]; !ok {
		c.cursors[source] = time.Time{}
	}
}

func (c *cursorCollector) set(source string, t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.cursors[source]) {
		c.cursors[source] = t
	}
}

func (c *cursorCollector) get(source string) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cursors[source]
}

func (c *cursorCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.ts; ch <- c.lag }

func (c *cursorCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	for source, t := range c.cursors {
		var ts, lag float64
		if !t.IsZero() {
			ts = float64(t.UnixNano()) / 1e9
			lag = math.Max(now.Sub(t).Seconds(), 0)
		}
		ch <- prometheus.MustNewConstMetric(c.ts, prometheus.GaugeValue, ts, source)
		ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, lag, source)
	}
}

// declare creates a Source's notification series at 0.
func (m *notifyMetrics) declare(source string) {
	m.received.WithLabelValues(source)
	for _, r := range []string{rejectUnsubscribed, rejectSignature, rejectTopic, rejectPayload, rejectTooLarge, rejectNotQueued, rejectOther} {
		m.rejected.WithLabelValues(source, r)
	}
}

// primeCursors reads each Source's change cursor (Deps.Cursors), so that
// its lag is reported from start-up rather than from its first pass.
func (h *Harvester) primeCursors(ctx context.Context) {
	for _, name := range h.order {
		v, err := h.deps.Cursors.Cursor(ctx, name, curChanges)
		if err != nil || v == "" {
			continue
		}
		if t, err := resourcesync.ParseTime(v); err == nil {
			h.m.lag(name, t)
		}
	}
}
