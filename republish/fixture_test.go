package republish

import (
	"bytes"
	"compress/gzip"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// base is the fixture's first period start; every time is after it.
var base = time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)

func i64(n int64) *int64 { return &n }

// fixture is a small catalog: collection alpha with a direct resource
// described by another, one with a query string, one updated in a later
// period, one deleted, and one harvested from an upstream aggregator;
// collection beta is empty.
type fixture struct {
	cat   *memCatalog
	blobs *memBlobs
	srv   *Server
	ts    *httptest.Server
	reg   *prometheus.Registry
}

func newFixture(t testing.TB, cfg Config) *fixture {
	t.Helper()
	f := &fixture{cat: newMemCatalog(), blobs: &memBlobs{blobs: map[string][]byte{}}, reg: prometheus.NewRegistry()}
	if cfg.BaseURL == "" {
		cfg.BaseURL = "http://mirror.example.org"
	}
	if cfg.Collections == nil {
		cfg.Collections = []Collection{{Name: "alpha", DescribedBy: "http://mirror.example.org/about/alpha"}, {Name: "beta"}}
	}
	srv, err := New(cfg, f.cat, f.blobs, slog.New(slog.DiscardHandler), f.reg)
	if err != nil {
		t.Fatal(err)
	}
	srv.now = func() time.Time { return base.Add(-time.Hour) }
	f.srv = srv
	f.ts = httptest.NewServer(srv.Handler())
	t.Cleanup(f.ts.Close)
	return f
}

func (f *fixture) add(coll, uri, op string, at time.Time, body, typ string, up viaduct.Change) {
	f.cat.apply(f.blobs.put(coll, uri, op, at, []byte(body), typ, up))
}

// fill loads the standard fixture.
func (f *fixture) fill() {
	orig := time.Date(2024, 4, 1, 8, 0, 0, 0, time.UTC)
	f.add("alpha", "http://origin.example.com/res1.html", "created", base.Add(time.Minute), "<p>one</p>", "text/html", viaduct.Change{
		Source: "origin", Modified: orig, Hash: resourcesync.Hashes{{Alg: "md5", Value: "0cbc6611f5540bd0809a388dc95a615b"}}, Length: i64(10), Type: "text/html",
		Links: []resourcesync.Link{
			{Rel: "describedby", Href: "http://origin.example.com/res1.meta.xml", Type: "application/xml"},
			{Rel: "canonical", Href: "http://origin.example.com/canonical/res1"},
			{Rel: "duplicate", Href: "http://mirror.origin.example.com/res1.html", Pri: 1},
		}})
	f.add("alpha", "http://origin.example.com/res1.meta.xml", "created", base.Add(2*time.Minute), "<meta/>", "application/xml", viaduct.Change{Source: "origin", Modified: orig})
	f.add("alpha", "http://origin.example.com/search?q=a&b=2", "created", base.Add(3*time.Minute), "results", "text/plain", viaduct.Change{Source: "origin", Modified: orig})
	f.add("alpha", "http://origin.example.com/gone.pdf", "created", base.Add(4*time.Minute), "%PDF", "application/pdf", viaduct.Change{Source: "origin", Modified: orig})
	f.add("alpha", "http://agg1.example.org/alpha/r/http/far.example.net/doc.txt", "created", base.Add(5*time.Minute), "far away", "text/plain", viaduct.Change{
		Source: "agg1", Modified: base, Type: "text/plain",
		Links: []resourcesync.Link{{Rel: "via", Href: "http://far.example.net/doc.txt", Modified: orig, Length: i64(8), Type: "text/plain",
			Hash: resourcesync.Hashes{{Alg: "md5", Value: "3d0ff9ba1c1fd34ed3c8ea0bcaac6b94"}}}},
	})
	f.add("alpha", "http://origin.example.com/search?q=a&b=2", "updated", base.Add(70*time.Minute), "results, more", "text/plain", viaduct.Change{Source: "origin", Modified: orig.Add(time.Hour)})
	f.add("alpha", "http://origin.example.com/gone.pdf", "deleted", base.Add(75*time.Minute), "", "", viaduct.Change{Source: "origin"})
}

// get fetches path from the fixture's server with the given request
// headers, without the transport's transparent gzip.
func (f *fixture) get(t testing.TB, path string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, f.ts.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	return resp, body
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// validate fails the test when the document has any Error-level problem.
func validate(t testing.TB, name string, doc []byte) *resourcesync.Report {
	t.Helper()
	rep, err := resourcesync.Validate(bytes.NewReader(doc), resourcesync.DefaultLimits(), resourcesync.Options{})
	if err != nil {
		t.Fatalf("%s: validate: %v", name, err)
	}
	for _, p := range rep.Problems {
		t.Logf("%s: %s", name, p)
	}
	if rep.Errors > 0 {
		t.Errorf("%s: %d validation errors", name, rep.Errors)
	}
	return rep
}
