package node

import (
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// publicLimits are the counters of what the public listener refused.
type publicLimits struct {
	refused  *prometheus.CounterVec // connections closed at once, by reason
	evicted  prometheus.Counter     // idle connections closed for a new one
	busy     prometheus.Counter     // expensive requests answered 503
	inflight prometheus.Gauge       // expensive requests being served
}

func newPublicLimits(reg prometheus.Registerer) *publicLimits {
	m := &publicLimits{
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

// hardenPublic applies cfg to the public server srv, whose listener is
// ln, and returns the listener to serve on. The server's own WriteTimeout
// stays off: it would bound a whole response, and a 50,000-entry list to a
// slow but honest Destination may take longer than any fixed bound; each
// write gets cfg.WriteTimeout instead (see limitedConn).
func hardenPublic(srv *http.Server, ln net.Listener, cfg PublicConfig, log *slog.Logger, reg prometheus.Registerer) net.Listener {
	m := newPublicLimits(reg)
	l := &connLimiter{Listener: ln, max: cfg.maxConns(), perClient: cfg.MaxConnsPerClient, writeTimeout: cfg.WriteTimeout, retryAfter: cfg.RetryAfter,
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
	srv.Handler = limitExpensive(srv.Handler, cfg.MaxExpensive, cfg.RetryAfter, m)
	log.Info("public listener limits", "max_conns", l.max, "max_conns_per_client", l.perClient,
		"read_timeout", cfg.ReadTimeout, "write_timeout", cfg.WriteTimeout, "idle_timeout", cfg.IdleTimeout, "max_expensive", cfg.MaxExpensive)
	return l
}

// limitExpensive answers 503 with Retry-After to a costly request (a catalog
// scan or a dump download) while max of them are being served: they are
// what a crowd of Destinations could use to take the catalog's read
// connections and the disk from the node's own work.
func limitExpensive(next http.Handler, max int, retryAfter time.Duration, m *publicLimits) http.Handler {
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

// expensive: a Resource or Change List or Index (a catalog scan), or a
// dump package.
func expensive(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	_, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	return rest == "resourcelist.xml" || rest == "changelist.xml" ||
		strings.HasPrefix(rest, "resourcelist/") || strings.HasPrefix(rest, "changelist/") || strings.HasPrefix(rest, "dumps/")
}

// retryAfterValue is d as a Retry-After header's whole seconds.
func retryAfterValue(d time.Duration) string {
	return strconv.Itoa(max(1, int(math.Ceil(d.Seconds()))))
}
