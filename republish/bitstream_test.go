package republish

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func TestBitstream(t *testing.T) {
	f := newFixture(t, Config{})
	f.fill()
	path := "/alpha/r/http/origin.example.com/search?q=a&b=2"
	resp, body := f.get(t, path)
	rec := f.cat.byURI["alpha"]["http://origin.example.com/search?q=a&b=2"]
	h := resp.Header
	if resp.StatusCode != 200 || string(body) != "results, more" || h.Get("Content-Type") != "text/plain" ||
		h.Get("Content-Length") != "13" || h.Get("ETag") != `"`+rec.SHA256+`"` ||
		h.Get("Last-Modified") != rec.At.Format(http.TimeFormat) ||
		h.Get("Link") != `<http://mirror.example.org/alpha/capabilitylist.xml>; rel="resourcesync"` {
		t.Errorf("GET %s: %s %q headers %v", path, resp.Status, body, h)
	}
	if resp, _ := f.get(t, path, "If-None-Match", `"`+rec.SHA256+`"`); resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match: %s", resp.Status)
	}
	if resp, _ := f.get(t, path, "If-Modified-Since", rec.At.Format(http.TimeFormat)); resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-Modified-Since: %s", resp.Status)
	}
	if resp, body := f.get(t, path, "Range", "bytes=0-6"); resp.StatusCode != http.StatusPartialContent || string(body) != "results" {
		t.Errorf("Range: %s %q", resp.Status, body)
	}
	if resp, _ := f.get(t, "/alpha/r/http/origin.example.com/gone.pdf"); resp.StatusCode != http.StatusGone {
		t.Errorf("deleted: %s, want 410", resp.Status)
	}
	for _, p := range []string{"/alpha/r/http/origin.example.com/never", "/beta/r/http/origin.example.com/res1.html", "/alpha/r/http/origin.example.com/search?q=a"} {
		if resp, _ := f.get(t, p); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %s, want 404", p, resp.Status)
		}
	}
	// A chained resource is served at the URI derived from its origin.
	if resp, body := f.get(t, "/alpha/r/http/far.example.net/doc.txt"); resp.StatusCode != 200 || string(body) != "far away" {
		t.Errorf("chained: %s %q", resp.Status, body)
	}
	// A blob that went missing is the aggregator's error, never a 200.
	delete(f.blobs.blobs, f.cat.byURI["alpha"]["http://origin.example.com/res1.html"].SHA256)
	if resp, _ := f.get(t, "/alpha/r/http/origin.example.com/res1.html"); resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("missing blob: %s", resp.Status)
	}
	if got := counterValue(t, f.srv.m.requests.WithLabelValues("bitstream", "410")); got != 1 {
		t.Errorf("bitstream 410 count %v", got)
	}
	if got := counterValue(t, f.srv.m.bytes.WithLabelValues("bitstream")); got < 13 {
		t.Errorf("bitstream bytes %v", got)
	}
}

func TestURIRoundTrip(t *testing.T) {
	for _, origin := range []string{
		"http://example.org", "http://example.org/", "https://Example.org:8443/a/b%20c.pdf?x=1&y=%2F",
		"http://example.org/a?", "http://[::1]:8080/x/y", "http://example.org/%E2%82%AC/caf%C3%A9?q=%26",
	} {
		p, err := resourcePath("c", origin)
		if err != nil {
			t.Fatalf("%s: %v", origin, err)
		}
		u, err := url.Parse("http://mirror" + p)
		if err != nil {
			t.Fatalf("%s -> %s: %v", origin, p, err)
		}
		coll, back, err := parseResourcePath(u.EscapedPath(), u.RawQuery, u.ForceQuery)
		if err != nil || coll != "c" || back != origin {
			t.Errorf("%s -> %s -> %s %s %v", origin, p, coll, back, err)
		}
	}
	if _, err := resourcePath("c", "urn:isbn:123"); err == nil {
		t.Error("opaque URI accepted")
	}
	if _, _, err := parseResourcePath("/c/other/x", "", false); err == nil {
		t.Error("non-resource path parsed")
	}
}

func TestProvenanceEndpoint(t *testing.T) {
	f := newFixture(t, Config{})
	f.fill()
	resp, body := f.get(t, "/provenance?uri="+url.QueryEscape("http://mirror.example.org/alpha/r/http/origin.example.com/res1.html"))
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"role": "origin"`) || !strings.Contains(string(body), `"role": "self"`) ||
		strings.Contains(string(body), `"role": "aggregator"`) {
		t.Errorf("direct: %s %s", resp.Status, body)
	}
	resp, body = f.get(t, "/provenance?uri="+url.QueryEscape("http://agg1.example.org/alpha/r/http/far.example.net/doc.txt"))
	if resp.StatusCode != 200 || strings.Count(string(body), `"role"`) != 3 {
		t.Errorf("by upstream URI: %s %s", resp.Status, body)
	}
	resp, body = f.get(t, "/provenance?uri="+url.QueryEscape("http://mirror.example.org/alpha/r/http/origin.example.com/gone.pdf"))
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"deleted": true`) {
		t.Errorf("deleted: %s %s", resp.Status, body)
	}
}

func TestConfig(t *testing.T) {
	good := Config{BaseURL: "https://m.example.org/", Collections: []Collection{{Name: "a"}}}
	c, err := good.withDefaults()
	if err != nil || c.BaseURL != "https://m.example.org" || c.MaxEntries != 50000 || c.MaxBytes != 50<<20 || c.ChangeListPeriod.Hours() != 1 {
		t.Errorf("defaults: %+v %v", c, err)
	}
	for field, bad := range map[string]Config{
		"base_url":          {Collections: good.Collections},
		"base_url ":         {BaseURL: "ftp://x", Collections: good.Collections},
		"collections":       {BaseURL: good.BaseURL},
		"collections[0]":    {BaseURL: good.BaseURL, Collections: []Collection{{Name: "a/b"}}},
		"collections[1]":    {BaseURL: good.BaseURL, Collections: []Collection{{Name: "a"}, {Name: "a"}}},
		"collections[0] ":   {BaseURL: good.BaseURL, Collections: []Collection{{Name: "provenance"}}},
		"max_entries":       {BaseURL: good.BaseURL, Collections: good.Collections, MaxEntries: 50001},
		"max_bytes":         {BaseURL: good.BaseURL, Collections: good.Collections, MaxBytes: 10},
		"changelist_period": {BaseURL: good.BaseURL, Collections: good.Collections, ChangeListPeriod: 1},
	} {
		if _, err := bad.withDefaults(); err == nil || !strings.Contains(err.Error(), strings.TrimSpace(field)) {
			t.Errorf("%s: err %v", field, err)
		}
	}
}

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
