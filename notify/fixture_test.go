package notify

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/republish"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/storage"
	"github.com/viaduct-mirror/viaduct/storage/dir"
)

var base = time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)

// sqliteFixture is a republisher on a real catalog file and a real
// directory store, fed the way the node feeds them: blobs written and
// committed, events applied with their stream sequence and time.
type sqliteFixture struct {
	srv   *republish.Server
	cat   *catalog.Catalog
	store *dir.Store
	seq   uint64
}

func newSQLiteFixture(t testing.TB, cfg republish.Config) *sqliteFixture {
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
	cfg.BaseURL = "http://mirror.example.org"
	cfg.Collections = []republish.Collection{{Name: "alpha", DescribedBy: "http://mirror.example.org/about/alpha"}, {Name: "beta"}}
	srv, err := republish.New(cfg, republish.FromSQLite(cat), store, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	return &sqliteFixture{srv: srv, cat: cat, store: store}
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
