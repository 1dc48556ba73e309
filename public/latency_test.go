package public

import (
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestRequestLatency times requests through a hardened listener and finds
// each in its route kind's histogram.
func TestRequestLatency(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })}
	kind := func(r *http.Request) string {
		if strings.HasPrefix(r.URL.Path, "/r/") {
			return KindBitstream
		}
		return KindDocument
	}
	l := Harden(srv, ln, Defaults(), Routes{Expensive: func(*http.Request) bool { return false }, Kind: kind}, slog.New(slog.DiscardHandler), reg)
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	for _, p := range []string{"/r/a", "/r/b", "/list.xml"} {
		resp, err := http.Get("http://" + ln.Addr().String() + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	got := map[string]uint64{}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "viaduct_public_request_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			got[m.GetLabel()[0].GetValue()] = m.GetHistogram().GetSampleCount()
		}
	}
	if got[KindBitstream] != 2 || got[KindDocument] != 1 || got[KindHub] != 0 || len(got) != 5 {
		t.Errorf("requests by kind: %v, want 2 bitstreams, 1 document and every kind present", got)
	}
}
