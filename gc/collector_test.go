package gc

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/storage"
	"github.com/viaduct-mirror/viaduct/storage/dir"
)

// env is a node's catalog and directory store, as the collector sees them.
type env struct {
	cat   *catalog.Catalog
	store *dir.Store
	reg   *prometheus.Registry
	seq   uint64
	mu    sync.Mutex // the applier: one writer of events
}

func newEnv(t *testing.T) *env {
	t.Helper()
	tmp := t.TempDir()
	cat, err := catalog.Open(context.Background(), filepath.Join(tmp, "catalog.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	// A file per blob: put dates blobs back by their files' times.
	// TestCompactsPacks collects from packs.
	store, err := dir.New(filepath.Join(tmp, "blobs"), dir.PackBelow(0))
	if err != nil {
		t.Fatal(err)
	}
	return &env{cat: cat, store: store, reg: prometheus.NewRegistry()}
}

// put stores data and dates its blob two days back: old, idle bytes.
func (e *env) put(t *testing.T, data []byte) string {
	t.Helper()
	key, err := putBytes(e.store, data)
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(e.blobPath(t, key), old, old); err != nil {
		t.Fatal(err)
	}
	return key
}

func (e *env) blobPath(t *testing.T, key string) string {
	t.Helper()
	var p string
	filepath.WalkDir(e.store.Root(), func(path string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == key {
			p = path
		}
		return nil
	})
	if p == "" {
		t.Fatalf("blob %s not found under %s", key, e.store.Root())
	}
	return p
}

func putBytes(s storage.Blobs, data []byte) (string, error) {
	ctx := context.Background()
	w, err := s.Create(ctx, storage.Expect{})
	if err != nil {
		return "", err
	}
	defer w.Abort()
	if _, err := w.Write(data); err != nil {
		return "", err
	}
	return w.Commit(ctx)
}

// publish applies the event of a fetch worker: uri now holds data.
func (e *env) publish(uri string, data []byte, op string, at time.Time) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	sum := sha256.Sum256(data)
	ev := &viaduct.Event{Source: "s", Collection: "c", URI: uri, Op: op, Type: "text/plain",
		Upstream: viaduct.Change{Source: "s", Collection: "c", URI: uri, Op: op, Time: at}}
	if op != resourcesync.Deleted {
		ev.SHA256, ev.Length = hex.EncodeToString(sum[:]), int64(len(data))
	}
	e.seq++
	return e.cat.Apply(context.Background(), e.seq, at, ev)
}

func (e *env) collector(t *testing.T, cfg Config, pkgs Packages) *Collector {
	t.Helper()
	d := Deps{Catalog: e.cat, Blobs: e.store, Registerer: e.reg, Align: time.Hour}
	if pkgs != nil {
		d.Packages = pkgs
	}
	c, err := New(cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// value reads a counter.
func value(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		return -1
	}
	return m.GetCounter().GetValue()
}

func exists(s storage.Blobs, key string) bool {
	_, err := s.Stat(context.Background(), key)
	return !errors.Is(err, storage.ErrNotFound)
}

// TestCollectUnderConcurrentIngest collects, again and again, while a
// fetch worker re-adds blobs that nothing referred to: some by committing
// the same bytes again, some by finding them stored and touching them
// (the skip path), each then publishing the event that refers to them.
// Every blob was found unreferenced by a collection a grace period ago,
// so any blob left idle is deleted at once: the worker's garbage goes, the
// live resources' blobs stay, and no blob the worker re-added is missing
// once its event is applied (when a collection took it first, the worker
// saw it gone and stored it again, as a fetch does).
func TestCollectUnderConcurrentIngest(t *testing.T) {
	e := newEnv(t)
	cfg := Config{Every: time.Hour, Grace: time.Minute}
	c := e.collector(t, cfg, nil)
	start := time.Now()
	var live, garbage, readd []string
	var garbageBytes int64
	content := func(kind string, i int) []byte { return []byte(fmt.Sprintf("%s blob %d", kind, i)) }
	for i := range 20 {
		live = append(live, e.put(t, content("live", i)))
		if err := e.publish(fmt.Sprintf("http://s/live%d", i), content("live", i), resourcesync.Created, start); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 40 {
		garbage = append(garbage, e.put(t, content("garbage", i)))
		garbageBytes += int64(len(content("garbage", i)))
		readd = append(readd, e.put(t, content("re-added", i)))
	}
	// A collection a grace period ago found every unreferenced blob.
	for _, k := range append(slices.Clone(garbage), readd...) {
		c.marks[k] = mark{at: start.Add(-2 * cfg.Grace)}
	}

	var wg sync.WaitGroup
	errs := make(chan error, len(readd))
	done := make(chan struct{})
	wg.Go(func() {
		defer close(done)
		for i, key := range readd {
			data := content("re-added", i)
			var err error
			if i%2 == 0 {
				_, err = putBytes(e.store, data) // the same bytes fetched again
			} else if _, err = storage.Touch(context.Background(), e.store, key); errors.Is(err, storage.ErrNotFound) {
				_, err = putBytes(e.store, data) // a collection took them first: fetch again
			}
			if err == nil {
				err = e.publish(fmt.Sprintf("http://s/readd%d", i), data, resourcesync.Created, time.Now())
			}
			if err == nil && !exists(e.store, key) {
				err = fmt.Errorf("re-added blob %d (%s) deleted after its event", i, key)
			}
			if err != nil {
				errs <- err
			}
		}
	})
	runs := 0
	for {
		if _, err := c.Collect(context.Background()); err != nil {
			t.Fatalf("Collect: %v", err)
		}
		runs++
		select {
		case <-done:
		default:
			continue
		}
		break
	}
	if _, err := c.Collect(context.Background()); err != nil {
		t.Fatalf("Collect: %v", err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i, k := range readd {
		if !exists(e.store, k) {
			t.Errorf("re-added blob %d is missing", i)
		}
	}
	for i, k := range live {
		if !exists(e.store, k) {
			t.Errorf("live blob %d was deleted", i)
		}
	}
	for i, k := range garbage {
		if exists(e.store, k) {
			t.Errorf("garbage blob %d is still there after %d collections", i, runs+1)
		}
	}
	if got := value(c.m.bytes); got < float64(garbageBytes) {
		t.Errorf("viaduct_gc_bytes_deleted_total = %v, want at least the garbage's %d", got, garbageBytes)
	}
	t.Logf("%d collections during the ingest", runs)
}

// TestCollectWaitsOutTheGrace checks the two-findings rule with the
// store's times: a blob found unreferenced once is only marked; the next
// collection, less than a grace period later, keeps it; one a grace
// period after the first deletes it, unless it was touched since.
func TestCollectWaitsOutTheGrace(t *testing.T) {
	e := newEnv(t)
	cfg := Config{Every: time.Hour, Grace: time.Hour}
	c := e.collector(t, cfg, nil)
	idle, touched := e.put(t, []byte("idle")), e.put(t, []byte("touched"))
	now := time.Now()
	c.now = func() time.Time { return now }
	ctx := context.Background()
	if r, err := c.Collect(ctx); err != nil || r.Blobs != 0 || r.Marked != 2 {
		t.Fatalf("first collection: %+v, %v; want 2 marked, none deleted", r, err)
	}
	now = now.Add(30 * time.Minute)
	if r, err := c.Collect(ctx); err != nil || r.Blobs != 0 || r.Marked != 2 {
		t.Fatalf("collection within the grace: %+v, %v; want 2 still marked, none deleted", r, err)
	}
	if _, err := e.store.Touch(ctx, touched); err != nil {
		t.Fatal(err)
	}
	now = now.Add(31 * time.Minute)
	r, err := c.Collect(ctx)
	if err != nil || r.Blobs != 1 || exists(e.store, idle) || !exists(e.store, touched) {
		t.Fatalf("collection past the grace: %+v, %v; want the idle blob deleted, the touched one kept", r, err)
	}
}

// TestRetention prunes the change log and deleted resources past the
// retention, and counts them.
func TestRetention(t *testing.T) {
	e := newEnv(t)
	c := e.collector(t, Config{Every: time.Hour, Grace: time.Hour, Retention: 24 * time.Hour}, nil)
	old := time.Now().Add(-30 * 24 * time.Hour)
	steps := []struct {
		uri, op, body string
		at            time.Time
	}{
		{"a", resourcesync.Created, "a1", old},
		{"a", resourcesync.Updated, "a2", old.Add(time.Second)},
		{"gone", resourcesync.Created, "g1", old.Add(2 * time.Second)},
		{"gone", resourcesync.Deleted, "", old.Add(3 * time.Second)},
		{"a", resourcesync.Updated, "a3", time.Now()},
	}
	for _, s := range steps {
		if err := e.publish("http://s/"+s.uri, []byte(s.body), s.op, s.at); err != nil {
			t.Fatal(err)
		}
	}
	r, err := c.Collect(context.Background())
	if err != nil || r.Changes != 3 || r.Tombstones != 1 {
		t.Fatalf("Collect = %+v, %v; want 3 changes (a1, g1 and gone's deletion) and 1 tombstone", r, err)
	}
	if got := value(c.m.changes) + value(c.m.tombstones); got != 4 {
		t.Errorf("change and tombstone counters sum to %v, want 4", got)
	}
	st, err := e.cat.CollectionStats(context.Background(), "c")
	if cutoff := c.cutoff(); err != nil || !st.First.Equal(cutoff) || cutoff.UnixNano()%int64(time.Hour) != 0 {
		t.Errorf("collection's first change %v (%v); want the cutoff %v, on the hour", st.First, err, cutoff)
	}
}

// pkgs is the republisher's dumps as the collector sees them: the
// packages served and those superseded.
type pkgs struct {
	mu               sync.Mutex
	served, replaced []string
}

func (p *pkgs) BlobRefs(ctx context.Context, fn func(string) error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, k := range p.served {
		if err := fn(k); err != nil {
			return err
		}
	}
	return nil
}

func (p *pkgs) Superseded(ctx context.Context) ([]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.replaced), nil
}

func (p *pkgs) Forget(ctx context.Context, keys []string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.replaced = slices.DeleteFunc(p.replaced, func(k string) bool { return slices.Contains(keys, k) })
	return nil
}

// TestSupersededDumpPackages deletes the packages the dumps no longer
// serve once their grace is over, counts them, and has the dumps forget
// them; served packages stay.
func TestSupersededDumpPackages(t *testing.T) {
	e := newEnv(t)
	p := &pkgs{}
	c := e.collector(t, Config{Every: time.Hour, Grace: time.Hour}, p)
	p.served = []string{e.put(t, []byte("current package")), e.put(t, []byte("current manifest"))}
	p.replaced = []string{e.put(t, []byte("old package"))}
	oldManifest := e.put(t, []byte("old manifest"))
	now := time.Now()
	c.now = func() time.Time { return now }
	if _, err := c.Collect(context.Background()); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Hour)
	r, err := c.Collect(context.Background())
	if err != nil || r.Packages != 1 || r.Blobs != 2 {
		t.Fatalf("Collect = %+v, %v; want 1 package and 2 blobs (its ZIP and manifest) deleted", r, err)
	}
	if len(p.replaced) != 0 || exists(e.store, oldManifest) || !exists(e.store, p.served[0]) || !exists(e.store, p.served[1]) {
		t.Errorf("superseded %v left to forget, old manifest there %v; served packages must stay", p.replaced, exists(e.store, oldManifest))
	}
	if got := value(c.m.packages); got != 1 {
		t.Errorf("viaduct_gc_dump_packages_deleted_total = %v, want 1", got)
	}
}

// peers reports a fixed least applied sequence of the other nodes.
type peers struct{ applied uint64 }

func (p *peers) MinApplied(context.Context) (uint64, bool, error) { return p.applied, true, nil }

func (p *peers) BlobRefs(context.Context, func(string) error) error { return nil }

// TestLaggingPeerKeepsBlob: a blob found unreferenced at sequence 1 stays,
// past the grace period, while another node's catalog has not applied
// sequence 1 (it may still refer to the blob), and goes once it has.
func TestLaggingPeerKeepsBlob(t *testing.T) {
	e := newEnv(t)
	if err := e.publish("http://s/other", []byte("other"), resourcesync.Created, time.Now()); err != nil {
		t.Fatal(err)
	}
	p := &peers{applied: 0}
	c, err := New(Config{Every: time.Hour, Grace: time.Hour}, Deps{Catalog: e.cat, Blobs: e.store, Peers: p})
	if err != nil {
		t.Fatal(err)
	}
	key := e.put(t, []byte("unreferenced at 1"))
	now := time.Now()
	c.now = func() time.Time { return now }
	ctx := context.Background()
	if r, err := c.Collect(ctx); err != nil || r.Seq != 1 || r.Marked != 1 {
		t.Fatalf("first collection: %+v, %v; want the blob marked at sequence 1", r, err)
	}
	now = now.Add(2 * time.Hour)
	if r, err := c.Collect(ctx); err != nil || r.Blobs != 0 || !exists(e.store, key) {
		t.Fatalf("with a node at sequence 0: %+v, %v; want the blob kept", r, err)
	}
	p.applied = 1
	if r, err := c.Collect(ctx); err != nil || r.Blobs != 1 || exists(e.store, key) {
		t.Fatalf("with every node at sequence 1: %+v, %v; want the blob deleted", r, err)
	}
}

// TestCompactsPacks: a collection that deletes packed blobs also rewrites
// the pack they leave mostly empty, and reports the bytes freed; the
// referenced blob in it stays readable.
func TestCompactsPacks(t *testing.T) {
	e := newEnv(t)
	root := t.TempDir()
	st, err := dir.New(root)
	if err != nil {
		t.Fatal(err)
	}
	live := []byte("referenced")
	var garbage []string
	for _, data := range [][]byte{live, bytes.Repeat([]byte("a"), 2000), bytes.Repeat([]byte("b"), 2000)} {
		k, err := putBytes(st, data)
		if err != nil {
			t.Fatal(err)
		}
		garbage = append(garbage, k)
	}
	garbage = garbage[1:]
	st.Close()
	// Reopened, the store writes to a new pack: the first can be rewritten.
	if e.store, err = dir.New(root); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.store.Close() })
	if err := e.publish("http://s/live", live, resourcesync.Created, time.Now()); err != nil {
		t.Fatal(err)
	}
	c := e.collector(t, Config{Every: time.Hour, Grace: time.Hour}, nil)
	now := time.Now().Add(48 * time.Hour)
	c.now = func() time.Time { return now }
	ctx := context.Background()
	if r, err := c.Collect(ctx); err != nil || r.Marked != 2 || r.Compacted != 0 {
		t.Fatalf("first collection: %+v, %v; want 2 marked, nothing compacted", r, err)
	}
	now = now.Add(2 * time.Hour)
	r, err := c.Collect(ctx)
	if err != nil || r.Blobs != 2 || r.Compacted == 0 {
		t.Fatalf("second collection: %+v, %v; want 2 deleted and their pack compacted", r, err)
	}
	for _, k := range garbage {
		if exists(e.store, k) {
			t.Errorf("deleted blob %s still stored", k)
		}
	}
	b, err := e.store.Open(ctx, hexSum(live))
	if err != nil {
		t.Fatalf("referenced blob after compaction: %v", err)
	}
	defer b.Close()
	if got, _ := io.ReadAll(b); !bytes.Equal(got, live) {
		t.Errorf("referenced blob reads %q", got)
	}
}

func hexSum(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
