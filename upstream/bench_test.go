package upstream

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// BenchmarkGet measures one document GET and read through the whole
// stack (policy, host limits, capped body) against a loopback server.
func BenchmarkGet(b *testing.B) {
	doc := strings.Repeat("<url><loc>http://example.org/resource</loc></url>\n", 20000) // ~1 MB
	s := newServer(b, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, doc) })
	cfg := testConfig(nil)
	c, err := New(cfg, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	p, _ := NewPolicy(s.URL, cfg)
	c = c.WithPolicy(p)
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(int64(len(doc)))
	b.ResetTimer()
	for b.Loop() {
		resp, err := c.Get(ctx, Request{URI: s.URL + "/doc", Source: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "requests/s")
}

func BenchmarkParseLinkHeader(b *testing.B) {
	h := `<http://example.com/dataset1/capabilitylist.xml>; rel="resourcesync", <http://example.com/a>; rel="describedby alternate"; type="application/xml"`
	b.ReportAllocs()
	for b.Loop() {
		if len(ParseLinkHeader(h)) != 2 {
			b.Fatal("wrong parse")
		}
	}
}
