package harvester

import (
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// notifyMetrics count the change notifications upstream hubs deliver:
// how many were taken, how many refused and why, and the catch-ups from
// the Change List that gaps, disorder and quiet hubs caused. Together
// they tell an operator whether a Source is really followed by push.
type notifyMetrics struct {
	received *prometheus.CounterVec // source
	rejected *prometheus.CounterVec // source, reason
	catchUps *prometheus.CounterVec // source, reason
}

// Reasons a notification is refused, in
// viaduct_harvester_notifications_rejected_total.
const (
	rejectUnsubscribed = "unsubscribed" // 410: unknown or ended subscription
	rejectSignature    = "signature"    // 403: missing or wrong X-Hub-Signature
	rejectTopic        = "topic"        // 400: Link rel="self" is another topic
	rejectPayload      = "payload"      // 400: not a valid change notification
	rejectTooLarge     = "too_large"    // 413: past max_bytes or max_entries
	rejectNotQueued    = "not_queued"   // 503: could not be queued; the hub retries
	rejectOther        = "other"
)

func newNotifyMetrics(reg prometheus.Registerer) (*notifyMetrics, error) {
	opts := func(name, help string) prometheus.CounterOpts {
		return prometheus.CounterOpts{Namespace: "viaduct", Subsystem: "harvester", Name: name, Help: help}
	}
	m := &notifyMetrics{
		received: prometheus.NewCounterVec(opts("notifications_received_total", "Change notifications taken from upstream hubs (answered 204)."), []string{"source"}),
		rejected: prometheus.NewCounterVec(opts("notifications_rejected_total", "Change notifications refused, by reason: unsubscribed, signature, topic, payload, too_large, not_queued."), []string{"source", "reason"}),
		catchUps: prometheus.NewCounterVec(opts("notification_catchups_total", "Passes over the Change List run because notifications may have missed changes, by reason: first, gap, overlap, out-of-order, quiet."), []string{"source", "reason"}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.received, m.rejected, m.catchUps} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

// serveCounted answers a hub's request and counts a notification (a
// POST) by what the subscriber answered.
func (p *Push) serveCounted(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		p.sub.ServeHTTP(w, r)
		return
	}
	sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	p.sub.ServeHTTP(sw, r)
	id := path.Base(r.URL.Path)
	p.mu.Lock()
	name := p.byID[id]
	if sw.status/100 == 2 && name != "" {
		p.heard[name] = time.Now()
	}
	p.mu.Unlock()
	m := p.h.m.notify
	if sw.status/100 == 2 {
		m.received.WithLabelValues(name).Inc()
		return
	}
	m.rejected.WithLabelValues(name, p.rejectReason(sw.status, id, r)).Inc()
}

// rejectReason names why the subscriber refused a notification, from its
// status; a 400 is for another topic when the Link header names one.
func (p *Push) rejectReason(status int, id string, r *http.Request) string {
	switch status {
	case http.StatusGone:
		return rejectUnsubscribed
	case http.StatusForbidden:
		return rejectSignature
	case http.StatusRequestEntityTooLarge:
		return rejectTooLarge
	case http.StatusServiceUnavailable:
		return rejectNotQueued
	case http.StatusBadRequest:
		link := strings.Join(r.Header.Values("Link"), ",")
		if sub, ok := p.sub.Get(id); ok && link != "" && !strings.Contains(link, "<"+sub.Topic+">") {
			return rejectTopic
		}
		return rejectPayload
	}
	return rejectOther
}

// statusWriter keeps the status a handler answered.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}
