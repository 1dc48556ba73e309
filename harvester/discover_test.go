package harvester

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/viaduct-mirror/viaduct/upstream"
)

// discoverSource plays an upstream Source: routes maps request paths to
// files of testdata/discover, in which {{base}} is the server's URL and
// {{sd}} the URI of its Source Description.
type discoverSource struct {
	*httptest.Server
	hits atomic.Int64
}

func newDiscoverSource(t *testing.T, routes map[string]string, sdPath string) *discoverSource {
	t.Helper()
	s := &discoverSource{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		base := "http://" + r.Host
		if r.URL.Path == "/res1" {
			w.Header().Set("Link", `<`+base+`/dataset1/capabilitylist.xml>; rel="resourcesync", <`+base+`/about.html>; rel="describedby"`)
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n not really"))
			return
		}
		file, ok := routes[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		b, err := os.ReadFile(path.Join("testdata/discover", file))
		if err != nil {
			t.Errorf("testdata: %v", err)
			http.Error(w, err.Error(), 500)
			return
		}
		body := strings.NewReplacer("{{base}}", base, "{{sd}}", base+sdPath).Replace(string(b))
		switch path.Ext(file) {
		case ".xml":
			w.Header().Set("Content-Type", "application/xml")
		case ".html":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
		default:
			w.Header().Set("Content-Type", "text/plain")
		}
		w.Write([]byte(body))
	}))
	t.Cleanup(s.Close)
	return s
}

func discoverClient(t *testing.T) *upstream.Client {
	t.Helper()
	cfg := upstream.DefaultConfig()
	cfg.AllowLoopback = true
	cfg.PerHostRate = 1e6
	cfg.PerHostBurst = 1000
	c, err := upstream.New(cfg, upstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// fullSource has a Source Description at the well-known URI.
var fullSource = map[string]string{
	"/.well-known/resourcesync":    "sourcedescription.xml",
	"/dataset1/capabilitylist.xml": "capabilitylist.xml",
	"/dataset1/resourcelist.xml":   "resourcelist.xml",
	"/page.html":                   "page.html",
}

// robotsSource has its Source Description elsewhere, reachable only by
// going up from the Resource List its robots.txt names.
var robotsSource = map[string]string{
	"/robots.txt":                  "robots.txt",
	"/sitemap.xml":                 "sitemap.xml",
	"/resourcesync.xml":            "sourcedescription.xml",
	"/dataset1/capabilitylist.xml": "capabilitylist.xml",
	"/dataset1/resourcelist.xml":   "resourcelist.xml",
}

func TestDiscoverEntryPoints(t *testing.T) {
	cases := []struct {
		name   string
		routes map[string]string
		sd     string // path of the Source Description
		start  string
		via    string
	}{
		{"well-known URI", fullSource, "/.well-known/resourcesync", "/", "well-known URI"},
		{"Source Description URL", fullSource, "/.well-known/resourcesync", "/.well-known/resourcesync", "start"},
		{"robots.txt", robotsSource, "/resourcesync.xml", "/", "robots.txt, up link, up link"},
		{"HTML link", fullSource, "/.well-known/resourcesync", "/page.html", "HTML link, up link"},
		{"Link header", fullSource, "/.well-known/resourcesync", "/res1", "Link header, up link"},
		{"Capability List URL", fullSource, "/.well-known/resourcesync", "/dataset1/capabilitylist.xml", "up link"},
		{"Resource List URL", fullSource, "/.well-known/resourcesync", "/dataset1/resourcelist.xml", "up link, up link"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newDiscoverSource(t, tc.routes, tc.sd)
			got, err := Discover(context.Background(), discoverClient(t), "sim", s.URL+tc.start)
			if err != nil {
				t.Fatalf("Discover: %v", err)
			}
			if got.SourceDescription != s.URL+tc.sd {
				t.Errorf("SourceDescription %q, want %q", got.SourceDescription, s.URL+tc.sd)
			}
			want := []string{s.URL + "/dataset1/capabilitylist.xml", s.URL + "/dataset2/capabilitylist.xml"}
			var uris []string
			for _, cl := range got.CapabilityLists {
				uris = append(uris, cl.URI)
			}
			if !reflect.DeepEqual(uris, want) {
				t.Errorf("Capability Lists %v, want %v", uris, want)
			}
			if len(got.CapabilityLists) == 2 && got.CapabilityLists[0].DescribedBy != s.URL+"/info_about_set1_of_resources.xml" {
				t.Errorf("describedby %q", got.CapabilityLists[0].DescribedBy)
			}
			reached := s.URL + "/dataset1/capabilitylist.xml"
			if strings.HasPrefix(tc.via, "well-known") || tc.via == "start" {
				reached = ""
			}
			if got.Reached != reached {
				t.Errorf("Reached %q, want %q", got.Reached, reached)
			}
			if got.Via != tc.via {
				t.Errorf("Via %q, want %q; tried %q", got.Via, tc.via, got.Tried)
			}
		})
	}
}

func TestDiscoverCapabilityListWithoutSourceDescription(t *testing.T) {
	s := newDiscoverSource(t, map[string]string{"/orphan/capabilitylist.xml": "capabilitylist-orphan.xml"}, "")
	got, err := Discover(context.Background(), discoverClient(t), "sim", s.URL+"/orphan/capabilitylist.xml")
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	if got.SourceDescription != "" || len(got.CapabilityLists) != 1 ||
		got.CapabilityLists[0].URI != s.URL+"/orphan/capabilitylist.xml" ||
		got.CapabilityLists[0].DescribedBy != s.URL+"/about.xml" {
		t.Errorf("got %+v", got)
	}
}

// TestDiscoverUpLinkFails: a Capability List whose Source Description is
// gone still counts, and the failure is recorded.
func TestDiscoverUpLinkFails(t *testing.T) {
	routes := map[string]string{"/dataset1/capabilitylist.xml": "capabilitylist.xml"}
	s := newDiscoverSource(t, routes, "/gone.xml")
	got, err := Discover(context.Background(), discoverClient(t), "sim", s.URL+"/dataset1/capabilitylist.xml")
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	if got.SourceDescription != "" || len(got.CapabilityLists) != 1 {
		t.Errorf("got %+v", got)
	}
	if !strings.Contains(strings.Join(got.Tried, "\n"), s.URL+"/gone.xml: 404") {
		t.Errorf("tried %q should record the failed up link", got.Tried)
	}
}

func TestDiscoverNothingFound(t *testing.T) {
	s := newDiscoverSource(t, map[string]string{
		"/":            "sitemap.xml",
		"/robots.txt":  "sitemap.xml",
		"/sitemap.xml": "sitemap.xml",
	}, "")
	_, err := Discover(context.Background(), discoverClient(t), "sim", s.URL+"/")
	if !errors.Is(err, ErrNotDiscovered) {
		t.Fatalf("got %v, want ErrNotDiscovered", err)
	}
	for _, want := range []string{`source "sim"`, "/.well-known/resourcesync: 404", "/robots.txt: 0 Sitemap line(s)", s.URL + "/: Sitemap"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q should mention %q", err, want)
		}
	}
	if upstream.IsTransient(err) {
		t.Errorf("404s everywhere are not transient: %v", err)
	}
}

func TestDiscoverTransientFailureReported(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer s.Close()
	cfg := upstream.DefaultConfig()
	cfg.AllowLoopback = true
	cfg.MaxAttempts = 1
	c, err := upstream.New(cfg, upstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = Discover(context.Background(), c, "sim", s.URL+"/")
	if !errors.Is(err, ErrNotDiscovered) || !upstream.IsTransient(err) {
		t.Errorf("got %v, want ErrNotDiscovered and transient", err)
	}
}

// TestDiscoverLinkOutsidePolicy: a resourcesync link to another host is
// not followed.
func TestDiscoverLinkOutsidePolicy(t *testing.T) {
	other := newDiscoverSource(t, fullSource, "/.well-known/resourcesync")
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/page.html" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<html><head><link rel="resourcesync" href="` + other.URL + `/dataset1/capabilitylist.xml"></head></html>`))
	}))
	defer s.Close()
	_, err := Discover(context.Background(), discoverClient(t), "sim", s.URL+"/page.html")
	if !errors.Is(err, ErrNotDiscovered) || !errors.Is(err, upstream.ErrForbidden) {
		t.Errorf("got %v, want ErrNotDiscovered and ErrForbidden", err)
	}
	if other.hits.Load() != 0 {
		t.Errorf("the other host got %d requests", other.hits.Load())
	}
}

func TestHTMLLinks(t *testing.T) {
	page := `<!doctype html><html><head>
<base href="http://example.org/sets/">
<!-- <link rel="resourcesync" href="commented.xml"> -->
<link rel='alternate resourcesync' href='cl1.xml'>
<link href=/cl2.xml?a=1&amp;b=2 rel=resourcesync />
<link rel="stylesheet" href="s.css">
<link rel="resourcesync">
<link rel="resourcesync" href="unterminated`
	got := htmlLinks([]byte(page), "http://example.org/index.html")
	want := []string{"http://example.org/sets/cl1.xml", "http://example.org/cl2.xml?a=1&b=2"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("htmlLinks = %q, want %q", got, want)
	}
}

func FuzzHTMLLinks(f *testing.F) {
	f.Add([]byte(`<link rel=resourcesync href=x><!-- <link`))
	f.Add([]byte(`<LINK REL="resourcesync" HREF='/a'/><base href=`))
	f.Fuzz(func(t *testing.T, page []byte) {
		htmlLinks(page, "http://example.org/")
	})
}
