package public

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Route kinds of viaduct_public_request_duration_seconds.
const (
	KindDocument  = "document"  // a ResourceSync document, the home page
	KindBitstream = "bitstream" // a republished resource's bytes
	KindDump      = "dump"      // a Dump package (ZIP) or its manifest
	KindHub       = "hub"       // the WebSub hub, and upstream hubs' callbacks
	KindOther     = "other"     // probes, unknown paths
)

// latencyBuckets reach from a document served from the cache (a
// millisecond) to a dump downloaded by a slow Destination (minutes).
var latencyBuckets = []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}

// timeRequests observes how long each request to next takes, to its last
// byte, by the route kind kind names: a Destination's experience is the
// public listener's whole purpose, and its documents and its bitstreams
// are slow for different reasons (catalog scans, blob reads).
func timeRequests(next http.Handler, kind func(*http.Request) string, reg prometheus.Registerer) http.Handler {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "viaduct", Subsystem: "public", Name: "request_duration_seconds",
		Help:    "Time to answer a request on the public listener, to the last byte, by route kind: document, bitstream, dump, hub, other.",
		Buckets: latencyBuckets}, []string{"kind"})
	if reg != nil {
		_ = reg.Register(h)
	}
	for _, k := range []string{KindDocument, KindBitstream, KindDump, KindHub, KindOther} {
		h.WithLabelValues(k)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		began := time.Now()
		next.ServeHTTP(w, r)
		h.WithLabelValues(kind(r)).Observe(time.Since(began).Seconds())
	})
}
