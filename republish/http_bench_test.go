package republish

import (
	"bytes"
	"compress/gzip"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// BenchmarkServeHTTP measures what a Destination meets: the Resource List
// (index and parts) and the Change List of a 1,000,000-resource collection
// read over loopback HTTP from the catalog, beside the ceiling of the HTTP
// layer here, the same Go HTTP server sending the same bytes from files
// (http.FileServer). The gzip runs ask for gzip and decompress, as a
// Destination would; their ceiling serves the same documents compressed
// beforehand. Compare each viaduct run's entries/s with its file run's.
//
//	go test -run '^$' -bench ServeHTTP -benchtime 3x ./republish
func BenchmarkServeHTTP(b *testing.B) {
	const n = 1_000_000
	cat := benchCatalog(b, n)
	f := newFixture(b, Config{})
	var srv *Server
	serve := func(cache CacheConfig) *httptest.Server {
		cfg := f.srv.cfg
		cfg.Cache = cache
		cfg.ChangeListPeriod = 24 * time.Hour
		var err error
		if srv, err = New(cfg, FromSQLite(cat), f.blobs, slog.New(slog.DiscardHandler), prometheus.NewRegistry()); err != nil {
			b.Fatal(err)
		}
		srv.now = f.srv.now
		live := httptest.NewServer(srv.Handler())
		b.Cleanup(live.Close)
		return live
	}
	// Every fetch of live reads the catalog, as the first one after a
	// change does; cached sends again what it rendered for the same state.
	live := serve(CacheConfig{MaxBytes: -1})
	cached := serve(CacheConfig{Dir: b.TempDir(), MaxBytes: 4 << 30})
	const mirror = "http://mirror.example.org"
	docs := map[string]string{
		"ResourceList": "/alpha/resourcelist.xml",
		"ChangeList":   "/alpha/changelist/" + srv.periodStart(base).Format(periodLayout) + ".xml",
	}
	for _, name := range []string{"ResourceList", "ChangeList"} {
		// The same bytes, as files, for the ceiling.
		dir := b.TempDir()
		fetchAll(b, live.URL, mirror, docs[name], false, func(p string, body []byte) {
			writeDoc(b, dir, p, body)
		})
		files := httptest.NewServer(precompressed(dir))
		for _, gz := range []bool{false, true} {
			suffix := ""
			if gz {
				suffix = "-gzip"
			}
			// A document is cached on its second request at one state.
			fetchAll(b, cached.URL, mirror, docs[name], gz, nil)
			fetchAll(b, cached.URL, mirror, docs[name], gz, nil)
			for _, side := range []struct {
				name string
				url  string
			}{{"viaduct", live.URL}, {"viaduct-cached", cached.URL}, {"file", files.URL}} {
				b.Run(name+suffix+"/"+side.name, func(b *testing.B) {
					entries := 0
					for b.Loop() {
						_, entries = fetchAll(b, side.url, mirror, docs[name], gz, nil)
					}
					b.ReportMetric(float64(entries)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
				})
			}
		}
		files.Close()
	}
}

// fetchAll GETs a document and, when it is an index, every document it
// lists (their URIs moved from mirror to url), parsing each body as it
// arrives, as a Destination's reader does; each body goes to keep. It
// returns the paths read and the entries of the lists among them.
func fetchAll(b *testing.B, url, mirror, path string, gz bool, keep func(string, []byte)) (paths []string, entries int) {
	body := open(b, url+path, gz)
	defer body.Close()
	var r io.Reader = body
	var kept bytes.Buffer
	if keep != nil {
		r = io.TeeReader(body, &kept)
	}
	// A Change List of a period with more changes than a list may hold is
	// read whole, whatever its size, as the benchmark reads what is served.
	lim := resourcesync.DefaultLimits()
	lim.MaxBytes, lim.MaxDecompressed, lim.MaxEntries = 1<<30, 1<<30, 2_000_000
	rd, err := resourcesync.NewReader(r, lim)
	if err != nil {
		b.Fatal(err)
	}
	index := rd.Header().Root == resourcesync.SitemapIndex
	var listed []string
	for {
		e, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		if index {
			listed = append(listed, strings.TrimPrefix(e.Loc, mirror))
		} else {
			entries++
		}
	}
	if keep != nil {
		if _, err := io.Copy(io.Discard, r); err != nil {
			b.Fatal(err)
		}
		keep(path, kept.Bytes())
	}
	body.Close()
	paths = []string{path}
	for _, p := range listed {
		more, n := fetchAll(b, url, mirror, p, gz, keep)
		paths, entries = append(paths, more...), entries+n
	}
	return paths, entries
}

// open GETs url, asking for gzip when gz, and returns the body, decoded.
func open(b *testing.B, url string, gz bool) io.ReadCloser {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if gz {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		b.Fatalf("GET %s: %s", url, resp.Status)
	}
	if resp.Header.Get("Content-Encoding") != "gzip" {
		if gz {
			resp.Body.Close()
			b.Fatalf("GET %s: asked for gzip, got %q", url, resp.Header.Get("Content-Encoding"))
		}
		return resp.Body
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		resp.Body.Close()
		b.Fatal(err)
	}
	return struct {
		io.Reader
		io.Closer
	}{zr, resp.Body}
}

// writeDoc keeps a document's bytes under dir at its path, and beside it
// the same bytes gzipped.
func writeDoc(b *testing.B, dir, path string, body []byte) {
	p := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(path, "/")))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		b.Fatal(err)
	}
	var z bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&z, gzip.BestSpeed)
	zw.Write(body)
	zw.Close()
	if err := os.WriteFile(p, body, 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(p+".gz", z.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
}

// precompressed is http.FileServer, answering a client that asks for gzip
// with the file compressed beforehand.
func precompressed(dir string) http.Handler {
	fs := http.FileServer(http.Dir(dir))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A part's URI has a query; its file is named with it.
		if r.URL.RawQuery != "" {
			r = r.Clone(r.Context())
			r.URL.Path += "?" + r.URL.RawQuery
			r.URL.RawQuery = ""
		}
		if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Content-Type", "application/xml")
			r2 := r.Clone(r.Context())
			r2.URL.Path += ".gz"
			fs.ServeHTTP(w, r2)
			return
		}
		fs.ServeHTTP(w, r)
	})
}
