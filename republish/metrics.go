package republish

import "github.com/prometheus/client_golang/prometheus"

// metrics counts what the server answers, by document type: "description",
// "capabilitylist", "resourcelist", "resourcelist-index",
// "resourcelist-part", "changelist", "changelist-index", "bitstream",
// "provenance", "html", "robots" and "other".
type metrics struct {
	requests *prometheus.CounterVec
	bytes    *prometheus.CounterVec
	entries  *prometheus.CounterVec
	// cacheHits counts documents sent from the document cache.
	cacheHits *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "viaduct", Subsystem: "republish", Name: "requests_total",
			Help: "Requests answered, by document type and HTTP status.",
		}, []string{"doc", "code"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "viaduct", Subsystem: "republish", Name: "response_bytes_total",
			Help: "Bytes of response bodies sent (after compression), by document type.",
		}, []string{"doc"}),
		entries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "viaduct", Subsystem: "republish", Name: "entries_total",
			Help: "Entries written into documents, by document type (not those sent again from the document cache).",
		}, []string{"doc"}),
		cacheHits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "viaduct", Subsystem: "republish", Name: "cache_hits_total",
			Help: "Documents sent from the document cache, as rendered for an earlier request at the same catalog state.",
		}, []string{"doc"}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.requests, m.bytes, m.entries, m.cacheHits} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
