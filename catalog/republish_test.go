package catalog_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/republish"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/storage"
	"github.com/viaduct-mirror/viaduct/storage/dir"
)

// TestRepublishedDocumentsSkipTombstones serves a catalog holding one
// resource and a tombstone (a deletion of what was never held, then its
// older creation, ignored): the Resource List and Change Lists name only
// the resource held, the counts are its, and the tombstone's bitstream
// answers 404 like any URI never held.
func TestRepublishedDocumentsSkipTombstones(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	cat, err := catalog.Open(ctx, filepath.Join(tmp, "catalog.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	store, err := dir.New(filepath.Join(tmp, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	put := func(body string) (string, string, int64) {
		w, err := store.Create(ctx, storage.Expect{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Abort()
		io.WriteString(w, body)
		n, hs := w.Sum()
		key, err := w.Commit(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return key, hs.Get(resourcesync.MD5), n
	}
	const held, gone = "http://up.example.org/held.txt", "http://up.example.org/gone.txt"
	srcTime := time.Date(2025, 6, 1, 8, 0, 0, 0, time.UTC)
	ev := func(uri, op, body string, minute int) *viaduct.Event {
		e := &viaduct.Event{Source: "up", Collection: "c", URI: uri, Op: op, Type: "text/plain"}
		if body != "" {
			e.SHA256, e.MD5, e.Length = put(body)
		}
		e.Upstream = viaduct.Change{Source: "up", Collection: "c", URI: uri, Op: op, Time: srcTime.Add(time.Duration(minute) * time.Minute)}
		return e
	}
	stream := time.Now().Add(-time.Minute).Truncate(time.Second)
	for i, e := range []*viaduct.Event{
		ev(held, resourcesync.Created, "kept", 1),
		ev(gone, resourcesync.Deleted, "", 5),
		ev(gone, resourcesync.Created, "stale", 4),
	} {
		if err := cat.Apply(ctx, uint64(i+1), stream.Add(time.Duration(i)*time.Second), e); err != nil {
			t.Fatal(err)
		}
	}

	srv, err := republish.New(republish.Config{BaseURL: "http://mirror.example.org",
		Collections: []republish.Collection{{Name: "c"}}}, republish.FromSQLite(cat), store, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	get := func(path string) (int, string) {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := get("/c/resourcelist.xml")
	if code != http.StatusOK || !strings.Contains(body, "held.txt") || strings.Contains(body, "gone.txt") {
		t.Errorf("Resource List (%d) should list held.txt only:\n%s", code, body)
	}
	// The Change List Index, then every Change List it names.
	code, body = get("/c/changelist.xml")
	lists := ""
	for _, m := range regexp.MustCompile(`<loc>http://mirror\.example\.org([^<]+)</loc>`).FindAllStringSubmatch(body, -1) {
		c, b := get(m[1])
		if c != http.StatusOK {
			t.Fatalf("GET %s: %d", m[1], c)
		}
		lists += b
	}
	if code != http.StatusOK || !strings.Contains(lists, "held.txt") || strings.Contains(lists, "gone.txt") {
		t.Errorf("Change Lists (index %d) should list held.txt only:\n%s\n%s", code, body, lists)
	}
	rc := republish.FromSQLite(cat)
	var logged []string
	if err := rc.Changes(ctx, "c", time.Time{}, time.Time{}, func(r *republish.Record) error {
		logged = append(logged, r.Op+" "+r.URI)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(logged) != 1 || logged[0] != "created "+held {
		t.Errorf("change log as republished: %v, want the held resource's creation only", logged)
	}
	if st, err := rc.Stats(ctx, "c"); err != nil || st.Resources != 1 || st.Changes != 1 {
		t.Errorf("Stats = %+v, %v; want 1 resource, 1 change", st, err)
	}
	for uri, want := range map[string]int{held: http.StatusOK, gone: http.StatusNotFound} {
		u, err := srv.ResourceURI("c", uri)
		if err != nil {
			t.Fatal(err)
		}
		if code, _ := get(strings.TrimPrefix(u, "http://mirror.example.org")); code != want {
			t.Errorf("GET copy of %s: %d, want %d", uri, code, want)
		}
	}
}
