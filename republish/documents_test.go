package republish

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestGoldenDocuments serves every document type from the fixture and
// compares it with its golden file; every ResourceSync document must pass
// the validator without error.
func TestGoldenDocuments(t *testing.T) {
	f := newFixture(t, Config{})
	f.fill()
	docs := []struct {
		name, path string
		rs         bool
	}{
		{"source-description.xml", "/.well-known/resourcesync", true},
		{"capabilitylist.xml", "/alpha/capabilitylist.xml", true},
		{"resourcelist.xml", "/alpha/resourcelist.xml", true},
		{"resourcelist-empty.xml", "/beta/resourcelist.xml", true},
		{"changelist-index.xml", "/alpha/changelist.xml", true},
		{"changelist-closed.xml", "/alpha/changelist/20240501T100000Z.xml", true},
		{"changelist-open.xml", "/alpha/changelist/20240501T110000Z.xml", true},
		{"changelist-index-empty.xml", "/beta/changelist.xml", true},
		{"home.html", "/", false},
		{"robots.txt", "/robots.txt", false},
		{"provenance-origin.json", "/provenance?uri=" + url.QueryEscape("http://far.example.net/doc.txt"), false},
	}
	for _, d := range docs {
		t.Run(d.name, func(t *testing.T) {
			resp, body := f.get(t, d.path)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET %s: %s", d.path, resp.Status)
			}
			golden(t, d.name, body)
			if d.rs {
				validate(t, d.name, body)
			}
		})
	}
}

func TestResourceListEntries(t *testing.T) {
	f := newFixture(t, Config{})
	f.fill()
	_, body := f.get(t, "/alpha/resourcelist.xml")
	doc := string(body)
	for _, want := range []string{
		// query strings kept, escaped for XML
		`<loc>http://mirror.example.org/alpha/r/http/origin.example.com/search?q=a&amp;b=2</loc>`,
		// a chained resource is named after its origin, and keeps the upstream's via
		`<loc>http://mirror.example.org/alpha/r/http/far.example.net/doc.txt</loc>`,
		`rel="via" href="http://far.example.net/doc.txt" modified="2024-04-01T08:00:00Z"`,
		// describedby rewritten to the aggregator's copy
		`rel="describedby" href="http://mirror.example.org/alpha/r/http/origin.example.com/res1.meta.xml"`,
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("resource list lacks %s\n%s", want, doc)
		}
	}
	for _, not := range []string{"canonical", "duplicate", "gone.pdf", "agg1.example.org"} {
		if strings.Contains(doc, not) {
			t.Errorf("resource list contains %q", not)
		}
	}
	if n := strings.Count(doc, "<url>"); n != 4 {
		t.Errorf("%d entries, want 4", n)
	}
	if n := strings.Count(doc, `rel="via"`); n != 4 {
		t.Errorf("%d via links, want one per entry", n)
	}
}

func TestConditionalAndGzipDocuments(t *testing.T) {
	f := newFixture(t, Config{})
	f.fill()
	for _, path := range []string{"/.well-known/resourcesync", "/alpha/capabilitylist.xml", "/alpha/resourcelist.xml",
		"/alpha/changelist.xml", "/alpha/changelist/20240501T100000Z.xml", "/alpha/changelist/20240501T110000Z.xml", "/", "/robots.txt",
		"/provenance?uri=" + url.QueryEscape("http://origin.example.com/res1.html")} {
		resp, plain := f.get(t, path)
		etag := resp.Header.Get("ETag")
		if resp.StatusCode != 200 || etag == "" || resp.Header.Get("Content-Encoding") != "" {
			t.Fatalf("GET %s: %s, ETag %q, encoding %q", path, resp.Status, etag, resp.Header.Get("Content-Encoding"))
		}
		resp, zipped := f.get(t, path, "Accept-Encoding", "gzip")
		if resp.Header.Get("Content-Encoding") != "gzip" || !bytes.Equal(zipped, plain) {
			t.Errorf("GET %s gzip: encoding %q, same body %v", path, resp.Header.Get("Content-Encoding"), bytes.Equal(zipped, plain))
		}
		if resp.Header.Get("ETag") == etag {
			t.Errorf("GET %s: gzip variant has the identity ETag", path)
		}
		for _, tag := range []string{etag, resp.Header.Get("ETag")} {
			resp, body := f.get(t, path, "If-None-Match", tag, "Accept-Encoding", "gzip")
			if resp.StatusCode != http.StatusNotModified || len(body) != 0 {
				t.Errorf("GET %s If-None-Match %s: %s", path, tag, resp.Status)
			}
		}
		if lm := resp.Header.Get("Last-Modified"); lm != "" {
			resp, _ := f.get(t, path, "If-Modified-Since", lm)
			if resp.StatusCode != http.StatusNotModified {
				t.Errorf("GET %s If-Modified-Since %s: %s", path, lm, resp.Status)
			}
		}
	}
	// A new change makes the Resource List's old ETag stale.
	resp, _ := f.get(t, "/alpha/resourcelist.xml")
	etag := resp.Header.Get("ETag")
	f.add("alpha", "http://origin.example.com/new", "created", base.Add(80*60e9), "new", "text/plain", f.cat.byURI["alpha"]["http://origin.example.com/res1.meta.xml"].Upstream)
	if resp, _ := f.get(t, "/alpha/resourcelist.xml", "If-None-Match", etag); resp.StatusCode != http.StatusOK {
		t.Errorf("after a change, If-None-Match old ETag: %s, want 200", resp.Status)
	}
}

func TestNotFound(t *testing.T) {
	f := newFixture(t, Config{})
	f.fill()
	for _, path := range []string{"/nope/capabilitylist.xml", "/alpha/other.xml", "/alpha/changelist/20240501T103000Z.xml",
		"/alpha/changelist/20300101T000000Z.xml", "/alpha/resourcelist/x.xml", "/provenance?uri=http://unknown.example/"} {
		if resp, _ := f.get(t, path); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %s, want 404", path, resp.Status)
		}
	}
	if resp, _ := f.get(t, "/provenance"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("GET /provenance without uri: %s", resp.Status)
	}
}
