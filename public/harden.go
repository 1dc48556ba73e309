package public

import (
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// limits are the counters of what the public listener refused.
type limits struct {
	refused  *prometheus.CounterVec // connections closed at once, by reason
	evicted  prometheus.Counter     // idle connections closed for a new one
	busy     prometheus.Counter     // expensive requests answered 503
	inflight prometheus.Gauge       // expensive requests being served
}

func newLimits(reg prometheus.Registerer) *limits {
	m := &limits{
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "viaduct", Subsystem: "public", Name: "conns_refused_total",
			Help: "Connections closed as soon as accepted: per_client (max_conns_per_client) or full (max_conns, none idle)."}, []string{"reason"}),
		evicted: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "viaduct", Subsystem: "public", Name: "conns_evicted_total",
			Help: "Idle connections closed to make room for a new one under max_conns."}),
		busy: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "viaduct", Subsystem: "public", Name: "expensive_refused_total",
			Help: "List and dump requests answered 503 because max_expensive were being served."}),
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "viaduct", Subsystem: "public", Name: "expensive_in_flight",
			Help: "List and dump requests being served."}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.refused, m.evicted, m.busy, m.inflight} {
			_ = reg.Register(c)
		}
	}
	return m
}

// Routes tells the listener what a request is: the URL layout is the
// republisher's.
type Routes struct {
	// Expensive reports a request that scans the catalog or downloads a
	// Dump, which max_expensive bounds.
	Expensive func(*http.Request) bool
	// Kind names a request's route kind (KindDocument, ...) for the
	// latency histogram; nil counts every request as other.
	Kind func(*http.Request) string
}

// Harden applies cfg to the public server srv, whose listener is
// ln, and returns the listener to serve on. Every request is timed, the
// ones refused for max_expensive included. The server's own WriteTimeout
// stays off: it would bound a whole response, and a 50,000-entry list to a
// slow but honest Destination may take longer than any fixed bound; each
// write gets cfg.WriteTimeout instead (see limitedConn).
func Harden(srv *http.Server, ln net.Listener, cfg Config, routes Routes, log *slog.Logger, reg prometheus.Registerer) *Listener {
	m := newLimits(reg)
	l := &Listener{Listener: ln, max: cfg.maxConns(), perClient: cfg.MaxConnsPerClient, writeTimeout: cfg.WriteTimeout, retryAfter: cfg.RetryAfter,
		m: m, log: log, conns: map[*limitedConn]struct{}{}, byClient: map[string]int{}}
	srv.ReadTimeout = cfg.ReadTimeout
	srv.IdleTimeout = cfg.IdleTimeout
	prev := srv.ConnState
	srv.ConnState = func(c net.Conn, s http.ConnState) {
		l.state(c, s)
		if prev != nil {
			prev(c, s)
		}
	}
	kind := routes.Kind
	if kind == nil {
		kind = func(*http.Request) string { return KindOther }
	}
	srv.Handler = timeRequests(limitExpensive(srv.Handler, routes.Expensive, cfg.MaxExpensive, cfg.RetryAfter, m), kind, reg)
	log.Info("public listener limits", "max_conns", l.max, "max_conns_per_client", l.perClient,
		"read_timeout", cfg.ReadTimeout, "write_timeout", cfg.WriteTimeout, "idle_timeout", cfg.IdleTimeout, "max_expensive", cfg.MaxExpensive)
	return l
}

// limitExpensive answers 503 with Retry-After to a costly request (a catalog
// scan or a dump download) while max of them are being served: they are
// what a crowd of Destinations could use to take the catalog's read
// connections and the disk from the node's own work.
func limitExpensive(next http.Handler, expensive func(*http.Request) bool, max int, retryAfter time.Duration, m *limits) http.Handler {
	sem := make(chan struct{}, max)
	ra := retryAfterValue(retryAfter)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !expensive(r) {
			next.ServeHTTP(w, r)
			return
		}
		select {
		case sem <- struct{}{}:
		default:
			m.busy.Inc()
			w.Header().Set("Retry-After", ra)
			http.Error(w, "too many list and dump requests under way; try again later", http.StatusServiceUnavailable)
			return
		}
		m.inflight.Inc()
		defer func() { <-sem; m.inflight.Dec() }()
		next.ServeHTTP(w, r)
	})
}

// retryAfterValue is d as a Retry-After header's whole seconds.
func retryAfterValue(d time.Duration) string {
	return strconv.Itoa(max(1, int(math.Ceil(d.Seconds()))))
}
