package harvester

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// docServer serves documents given as text, "{B}" standing for its own
// URL; they can be replaced between passes.
type docServer struct {
	mu   sync.Mutex
	docs map[string]string
	URL  string
}

func startDocs(t *testing.T, docs map[string]string) *docServer {
	t.Helper()
	s := &docServer{docs: docs}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		d, ok := s.docs[r.URL.RequestURI()]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprint(w, strings.ReplaceAll(d, "{B}", s.URL))
	}))
	t.Cleanup(ts.Close)
	s.URL = ts.URL
	return s
}

func (s *docServer) set(path, doc string) { s.mu.Lock(); s.docs[path] = doc; s.mu.Unlock() }

const rsNS = `xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"`

// urlset is a document of capability c with header attributes md and
// the given url elements.
func urlset(c, md string, urls ...string) string {
	return `<?xml version="1.0" encoding="UTF-8"?><urlset ` + rsNS + `><rs:md capability="` + c + `" ` + md + `/>` + strings.Join(urls, "") + `</urlset>`
}

func capEntry(loc, c string) string {
	return `<url><loc>` + loc + `</loc><rs:md capability="` + c + `"/></url>`
}

func resEntry(loc string) string {
	return `<url><loc>` + loc + `</loc><lastmod>2024-01-01T00:00:00Z</lastmod><rs:md hash="sha-256:` + strings.Repeat("a", 64) + `" length="1"/></url>`
}

// uris are the URIs of changes with op, sorted.
func uris(cs []*viaduct.Change, op string) []string {
	var out []string
	for _, c := range cs {
		if c.Op == op {
			out = append(out, c.URI)
		}
	}
	slices.Sort(out)
	return out
}

// twoSets is a Source Description listing two Capability Lists, each
// with a Resource List only (so every pass is a baseline).
func twoSets() map[string]string {
	return map[string]string{
		"/.well-known/resourcesync": urlset("description", "", capEntry("{B}/a/caps.xml", "capabilitylist"), capEntry("{B}/b/caps.xml", "capabilitylist")),
		"/a/caps.xml":               urlset("capabilitylist", "", capEntry("{B}/a/rl.xml", "resourcelist")),
		"/b/caps.xml":               urlset("capabilitylist", "", capEntry("{B}/b/rl.xml", "resourcelist")),
		"/a/rl.xml":                 urlset("resourcelist", `at="2024-01-02T00:00:00Z"`, resEntry("{B}/a/1"), resEntry("{B}/a/2")),
		"/b/rl.xml":                 urlset("resourcelist", `at="2024-01-02T00:00:00Z"`, resEntry("{B}/b/1"), resEntry("{B}/b/2")),
	}
}

// TestSetsShareCollection harvests both Capability Lists of a Source
// Description into the Source's collection, and infers deletions from
// both lists together: a resource one set lists is never deleted for
// being absent from the other's list.
func TestSetsShareCollection(t *testing.T) {
	e := newEnv(t)
	s := startDocs(t, twoSets())
	h, _ := e.harvester(Defaults(), SourceConfig{Name: "s", URL: s.URL + "/", AllowLoopback: yes()})
	sync1(t, h, "s")
	got := e.drain()
	want := []string{s.URL + "/a/1", s.URL + "/a/2", s.URL + "/b/1", s.URL + "/b/2"}
	if c := uris(got, resourcesync.Created); !slices.Equal(c, want) {
		t.Fatalf("first pass created %v, want %v", c, want)
	}
	for _, c := range got {
		if c.Collection != "s" {
			t.Fatalf("%s went to collection %q, want the Source's", c.URI, c.Collection)
		}
	}
	e.apply(got)
	st, _ := h.SourceStatus(context.Background(), "s")
	if len(st.Warnings) == 0 || st.Warnings[0].Kind != tolSeveralSets {
		t.Fatalf("status warnings %+v, want several capability lists", st.Warnings)
	}

	s.set("/b/rl.xml", urlset("resourcelist", `at="2024-01-03T00:00:00Z"`, resEntry("{B}/b/1")))
	sync1(t, h, "s")
	got = e.drain()
	if d := uris(got, resourcesync.Deleted); !slices.Equal(d, []string{s.URL + "/b/2"}) {
		t.Fatalf("second pass deleted %v, want only %s/b/2", d, s.URL)
	}
	if c := uris(got, resourcesync.Created); len(c) != 0 {
		t.Fatalf("second pass created %v", c)
	}
}

// TestSetCollections sends a set the operator names to its own
// collection, with its own deletions.
func TestSetCollections(t *testing.T) {
	e := newEnv(t)
	s := startDocs(t, twoSets())
	h, _ := e.harvester(Defaults(), SourceConfig{Name: "s", URL: s.URL + "/", AllowLoopback: yes(),
		SetCollections: map[string]string{s.URL + "/b/caps.xml": "other"}})
	sync1(t, h, "s")
	got := e.drain()
	for _, c := range got {
		want := "s"
		if strings.Contains(c.URI, "/b/") {
			want = "other"
		}
		if c.Collection != want {
			t.Fatalf("%s went to %q, want %q", c.URI, c.Collection, want)
		}
	}
	if len(got) != 4 {
		t.Fatalf("queued %d changes, want 4", len(got))
	}
}

// TestCapabilityListIndex harvests every Capability List a Capability
// List Index names.
func TestCapabilityListIndex(t *testing.T) {
	e := newEnv(t)
	docs := twoSets()
	docs["/caps-index.xml"] = `<?xml version="1.0"?><sitemapindex ` + rsNS + `><rs:md capability="capabilitylist"/><sitemap><loc>{B}/a/caps.xml</loc></sitemap><sitemap><loc>{B}/b/caps.xml</loc></sitemap></sitemapindex>`
	s := startDocs(t, docs)
	h, _ := e.harvester(Defaults(), SourceConfig{Name: "s", URL: s.URL + "/caps-index.xml", AllowLoopback: yes()})
	for range 2 { // the second pass reads the index again, from its cursor
		sync1(t, h, "s")
		got := e.drain()
		if len(got) > 0 && len(uris(got, resourcesync.Created)) != 4 {
			t.Fatalf("queued %v, want the 4 resources of both lists", uris(got, resourcesync.Created))
		}
		e.apply(got)
	}
	var held []string
	if err := e.cat.SourceHeld(context.Background(), "s", "s", func(r *catalog.HeldEntry) error { held = append(held, r.URI); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(held) != 4 {
		t.Fatalf("catalog holds %v, want 4 resources", held)
	}
}

// TestPagedResourceList follows rel="next" pages as one Resource List and
// stops at a page that links back to one already read: everything listed
// is queued, the loop is counted, and no deletion is inferred from a list
// that could not be read to its end.
func TestPagedResourceList(t *testing.T) {
	e := newEnv(t)
	next := func(href string) string { return `<rs:ln rel="next" href="` + href + `"/>` }
	page := func(link string, urls ...string) string {
		return `<?xml version="1.0"?><urlset ` + rsNS + `>` + link + `<rs:md capability="resourcelist" at="2024-01-02T00:00:00Z"/>` + strings.Join(urls, "") + `</urlset>`
	}
	s := startDocs(t, map[string]string{
		"/caps.xml":  urlset("capabilitylist", "", capEntry("{B}/rl", "resourcelist")),
		"/rl":        page(next("{B}/rl?page=2"), resEntry("{B}/r/1")),
		"/rl?page=2": page(next("/rl?page=3"), resEntry("{B}/r/2")), // relative, as AtoM may
		"/rl?page=3": page("", resEntry("r/3")),                     // a relative loc
	})
	h, _ := e.harvester(Defaults(), SourceConfig{Name: "s", URL: s.URL + "/caps.xml", AllowLoopback: yes()})
	sync1(t, h, "s")
	got := e.drain()
	want := []string{s.URL + "/r/1", s.URL + "/r/2", s.URL + "/r/3"}
	if c := uris(got, resourcesync.Created); !slices.Equal(c, want) {
		t.Fatalf("created %v, want %v", c, want)
	}
	e.apply(got)
	st, _ := h.SourceStatus(context.Background(), "s")
	kinds := map[string]bool{}
	for _, w := range st.Warnings {
		kinds[w.Kind] = true
	}
	if !kinds[tolPaged] || !kinds[tolRelativeURI] {
		t.Fatalf("status warnings %+v, want paged and relative", st.Warnings)
	}

	// Page 3 now links back to page 1 and r/2 is gone: the loop ends the
	// walk, and r/2 is not deleted on the word of a list cut short.
	s.set("/rl?page=2", page(next("/rl?page=3")))
	s.set("/rl?page=3", page(next("{B}/rl"), resEntry("r/3")))
	before := counter(t, h, "errors", "s", kindDocument)
	sync1(t, h, "s")
	if d := uris(e.drain(), resourcesync.Deleted); len(d) != 0 {
		t.Fatalf("deleted %v after a looping list", d)
	}
	if counter(t, h, "errors", "s", kindDocument) <= before {
		t.Fatal("the loop was not counted")
	}
}

// TestGapWithoutBaseline: a Source of Change Lists only prunes past the
// cursor. Nothing can close the gap, so the changes still offered are
// applied and the gap is logged, counted (closed_by none) and shown.
func TestGapWithoutBaseline(t *testing.T) {
	e := newEnv(t)
	change := func(loc, op, at string) string {
		return `<url><loc>` + loc + `</loc><lastmod>` + at + `</lastmod><rs:md change="` + op + `" hash="sha-256:` + strings.Repeat("b", 64) + `" length="1"/></url>`
	}
	s := startDocs(t, map[string]string{
		"/caps.xml": urlset("capabilitylist", "", capEntry("{B}/cl.xml", "changelist")),
		"/cl.xml":   urlset("changelist", `from="2024-01-01T00:00:00Z"`, change("{B}/r/1", "created", "2024-01-01T01:00:00Z")),
	})
	h, _ := e.harvester(Defaults(), SourceConfig{Name: "s", URL: s.URL + "/caps.xml", AllowLoopback: yes()})
	sync1(t, h, "s")
	if c := uris(e.drain(), resourcesync.Created); len(c) != 1 {
		t.Fatalf("first pass created %v, want r/1 (baselined from the Change List)", c)
	}
	s.set("/cl.xml", urlset("changelist", `from="2024-02-01T00:00:00Z"`, change("{B}/r/2", "created", "2024-02-01T01:00:00Z")))
	sync1(t, h, "s")
	if c := uris(e.drain(), resourcesync.Created); !slices.Equal(c, []string{s.URL + "/r/2"}) {
		t.Fatalf("after the prune created %v, want r/2", c)
	}
	st, _ := h.SourceStatus(context.Background(), "s")
	if len(st.Gaps) != 1 || st.Gaps[0].ClosedBy != GapNone || st.Gaps[0].Document != s.URL+"/cl.xml" {
		t.Fatalf("status gaps %+v, want one closed by none", st.Gaps)
	}
	if n := counterVec(t, h.m.gaps, "s", GapNone); n != 1 {
		t.Fatalf("gaps_total{closed_by=none} = %v, want 1", n)
	}
}

// TestChangeListOnlySetShared: a set offering Change Lists only shares the
// Source's collection with a set that has a Resource List. Its resources
// are never deleted on the other list's word, and its baseline (reading
// its Change Lists from the start) is done once, not at every pass.
func TestChangeListOnlySetShared(t *testing.T) {
	e := newEnv(t)
	docs := twoSets()
	docs["/b/caps.xml"] = urlset("capabilitylist", "", capEntry("{B}/b/cl.xml", "changelist"))
	docs["/b/cl.xml"] = urlset("changelist", `from="2024-01-01T00:00:00Z"`,
		`<url><loc>{B}/b/9</loc><lastmod>2024-01-01T01:00:00Z</lastmod><rs:md change="created" hash="sha-256:`+strings.Repeat("c", 64)+`" length="1"/></url>`)
	docs["/a/caps.xml"] = urlset("capabilitylist", "", capEntry("{B}/a/rl.xml", "resourcelist"), capEntry("{B}/a/cl.xml", "changelist"))
	docs["/a/cl.xml"] = urlset("changelist", `from="2024-01-01T00:00:00Z"`)
	s := startDocs(t, docs)
	h, _ := e.harvester(Defaults(), SourceConfig{Name: "s", URL: s.URL + "/", AllowLoopback: yes()})
	sync1(t, h, "s")
	got := e.drain()
	want := []string{s.URL + "/a/1", s.URL + "/a/2", s.URL + "/b/9"}
	if c := uris(got, resourcesync.Created); !slices.Equal(c, want) {
		t.Fatalf("first pass created %v, want %v", c, want)
	}
	e.apply(got)
	sync1(t, h, "s")
	if got := e.drain(); len(got) != 0 {
		t.Fatalf("second pass queued %v %v, want nothing", uris(got, resourcesync.Created), uris(got, resourcesync.Deleted))
	}
}
