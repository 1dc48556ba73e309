package republish

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/viaduct-mirror/viaduct"
)

// A list asked for again at the same catalog state is sent from the
// document cache, byte for byte as rendered, in either encoding; once the
// catalog moves, the next request reads it, and a Destination sees the
// change.
func TestDocumentCache(t *testing.T) {
	dir := t.TempDir()
	f := newFixture(t, Config{Cache: CacheConfig{Dir: dir}})
	f.fill()
	hits := func() float64 {
		var m dto.Metric
		f.srv.m.cacheHits.WithLabelValues("resourcelist").Write(&m)
		return m.GetCounter().GetValue()
	}
	get := func(hdr ...string) []byte {
		t.Helper()
		resp, body := f.get(t, "/alpha/resourcelist.xml", hdr...)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("resource list: %s", resp.Status)
		}
		return body
	}

	first := get()
	if second := get(); !bytes.Equal(first, second) || hits() != 0 {
		t.Fatalf("second request: same bytes %v, cache hits %v; want the same bytes rendered again, no hit", bytes.Equal(first, second), hits())
	}
	if third := get(); !bytes.Equal(first, third) || hits() != 1 {
		t.Fatalf("third request: same bytes %v, cache hits %v; want the same bytes from the cache", bytes.Equal(first, third), hits())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("cache directory holds %d files, want the one list", len(entries))
	}
	// The gzip representation is cached apart, and decodes to the same.
	for range 3 {
		if z := get("Accept-Encoding", "gzip"); !bytes.Equal(z, first) {
			t.Fatalf("gzip representation differs from the identity one")
		}
	}
	if hits() != 2 {
		t.Fatalf("cache hits %v after three gzip requests, want 2", hits())
	}

	f.add("alpha", "http://origin.example.com/new.txt", "created", base.Add(10*time.Minute), "new", "text/plain", viaduct.Change{Source: "origin"})
	after := get()
	if bytes.Equal(after, first) || !bytes.Contains(after, []byte("new.txt")) {
		t.Fatalf("after a change the list was not read again:\n%s", after)
	}
	if hits() != 2 {
		t.Fatalf("a request after a change was a cache hit")
	}
}

// The cache removes at start what an earlier run of it left, and nothing
// else its directory holds.
func TestDocumentCacheKeepsOthersFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"doc-7", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	newFixture(t, Config{Cache: CacheConfig{Dir: dir}})
	if _, err := os.Stat(filepath.Join(dir, "doc-7")); !os.IsNotExist(err) {
		t.Errorf("an earlier run's cached document is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err != nil {
		t.Errorf("a file the cache did not write was removed: %v", err)
	}
}
