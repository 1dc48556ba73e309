package republish

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/storage"
	"github.com/viaduct-mirror/viaduct/storage/dir"
)

// sqliteFixture serves from a real catalog file and a real directory
// store, fed the way the node feeds them: blobs written and committed,
// events applied with their stream sequence and time.
type sqliteFixture struct {
	*fixture
	cat   *catalog.Catalog
	store *dir.Store
	seq   uint64
}

func newSQLiteFixture(t testing.TB, cfg Config) *sqliteFixture {
	t.Helper()
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
	if cfg.BaseURL == "" {
		cfg.BaseURL = "http://mirror.example.org"
	}
	if cfg.Collections == nil {
		cfg.Collections = []Collection{{Name: "alpha", DescribedBy: "http://mirror.example.org/about/alpha"}, {Name: "beta"}}
	}
	reg := prometheus.NewRegistry()
	srv, err := New(cfg, FromSQLite(cat), store, slog.New(slog.DiscardHandler), reg)
	if err != nil {
		t.Fatal(err)
	}
	srv.now = func() time.Time { return base.Add(-time.Hour) }
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return &sqliteFixture{fixture: &fixture{srv: srv, ts: ts, reg: reg}, cat: cat, store: store}
}

// apply stores body (unless the event is a deletion) and applies ev at
// stream time at with the next sequence.
func (f *sqliteFixture) apply(t testing.TB, at time.Time, ev *viaduct.Event, body []byte) {
	t.Helper()
	ctx := context.Background()
	if ev.Op != resourcesync.Deleted {
		w, err := f.store.Create(ctx, storage.Expect{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Abort()
		if _, err := w.Write(body); err != nil {
			t.Fatal(err)
		}
		n, hs := w.Sum()
		key, err := w.Commit(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ev.SHA256, ev.MD5, ev.Length = key, hs.Get(resourcesync.MD5), n
	}
	f.seq++
	if err := f.cat.Apply(ctx, f.seq, at, ev); err != nil {
		t.Fatalf("apply event %d (%s %s): %v", f.seq, ev.Op, ev.URI, err)
	}
}

// replay applies the memory catalog's changes, in their order, as events.
func (f *sqliteFixture) replay(t testing.TB, m *memCatalog, blobs *memBlobs) {
	t.Helper()
	var all []*Record
	for _, log := range m.changes {
		all = append(all, log...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Seq < all[j].Seq })
	for _, r := range all {
		ev := &viaduct.Event{Source: r.Upstream.Source, Collection: r.Collection, URI: r.URI, Op: r.Op,
			Type: r.Type, Upstream: r.Upstream}
		ev.Upstream.Collection = r.Collection
		f.apply(t, r.At, ev, blobs.blobs[r.SHA256])
	}
}

// TestSQLiteGoldenDocuments serves the standard fixture from a real
// catalog: every document must be byte for byte the one the memory
// catalog gives, so the adapter loses nothing the documents show.
func TestSQLiteGoldenDocuments(t *testing.T) {
	mem := newFixture(t, Config{})
	mem.fill()
	f := newSQLiteFixture(t, Config{})
	f.replay(t, mem.cat, mem.blobs)
	for _, name := range []string{"/.well-known/resourcesync", "/alpha/capabilitylist.xml", "/alpha/resourcelist.xml",
		"/beta/resourcelist.xml", "/alpha/changelist.xml", "/alpha/changelist/20240501T100000Z.xml",
		"/alpha/changelist/20240501T110000Z.xml", "/beta/changelist.xml", "/",
		"/provenance?uri=http%3A%2F%2Ffar.example.net%2Fdoc.txt",
		"/provenance?uri=http%3A%2F%2Fmirror.example.org%2Falpha%2Fr%2Fhttp%2Forigin.example.com%2Fres1.html"} {
		t.Run(name, func(t *testing.T) {
			wantResp, want := mem.get(t, name)
			gotResp, got := f.get(t, name)
			if gotResp.StatusCode != wantResp.StatusCode || !bytes.Equal(got, want) {
				t.Errorf("GET %s from SQLite: %s\n%s\nfrom memory: %s\n%s", name, gotResp.Status, got, wantResp.Status, want)
			}
			if et := gotResp.Header.Get("ETag"); et != wantResp.Header.Get("ETag") {
				t.Errorf("GET %s: ETag %s, want %s", name, et, wantResp.Header.Get("ETag"))
			}
		})
	}
}

// sum returns the hex md5 and sha-256 of s.
func sum(s string) (md5hex, sha string) {
	m, h := md5.Sum([]byte(s)), sha256.Sum256([]byte(s))
	return hex.EncodeToString(m[:]), hex.EncodeToString(h[:])
}
