package harvester

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/sim"
	"github.com/viaduct-mirror/viaduct/storage"
	"github.com/viaduct-mirror/viaduct/storage/dir"
)

// watchedBlobs is a directory store whose commits are watched: how many
// run at once, and the failing one when fail is set (counting from 1).
type watchedBlobs struct {
	storage.Blobs
	fail int

	mu       sync.Mutex
	joined   *sync.Cond
	commits  int
	inflight int
	most     int
}

func newWatchedBlobs(t *testing.T, fail int) *watchedBlobs {
	t.Helper()
	d, err := dir.New(t.TempDir())
	if err != nil {
		t.Fatalf("blob store: %v", err)
	}
	w := &watchedBlobs{Blobs: d, fail: fail}
	w.joined = sync.NewCond(&w.mu)
	return w
}

func (w *watchedBlobs) Create(ctx context.Context, want storage.Expect) (storage.BlobWriter, error) {
	bw, err := w.Blobs.Create(ctx, want)
	if err != nil {
		return nil, err
	}
	return &watchedWriter{BlobWriter: bw, w: w}, nil
}

type watchedWriter struct {
	storage.BlobWriter
	w *watchedBlobs
}

var errCommitRefused = errors.New("commit refused by the test")

// Commit holds the first commit until a second one has started (or a
// few seconds have passed), so commits made one after another show as
// at most one in flight.
func (ww *watchedWriter) Commit(ctx context.Context) (string, error) {
	w := ww.w
	w.mu.Lock()
	w.commits++
	n := w.commits
	w.inflight++
	w.most = max(w.most, w.inflight)
	w.joined.Broadcast()
	if n == 1 {
		timer := time.AfterFunc(5*time.Second, func() {
			w.mu.Lock()
			w.joined.Broadcast()
			w.mu.Unlock()
		})
		deadline := time.Now().Add(5 * time.Second)
		for w.inflight < 2 && time.Now().Before(deadline) {
			w.joined.Wait()
		}
		timer.Stop()
	}
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		w.inflight--
		w.mu.Unlock()
	}()
	if n == w.fail {
		return "", errCommitRefused
	}
	return ww.BlobWriter.Commit(ctx)
}

func (e *env) watchedHarvester(blobs storage.Blobs, sources ...SourceConfig) *Harvester {
	e.t.Helper()
	h, err := New(Defaults(), sources, Deps{Client: e.client, Upstream: e.ucfg, Cursors: e.cat, Held: e.cat, Publisher: e.pub,
		Blobs: blobs, SpoolDir: e.t.TempDir()}, nil, prometheus.NewRegistry())
	if err != nil {
		e.t.Fatalf("New: %v", err)
	}
	e.t.Cleanup(func() { h.Close() })
	return h
}

// TestDumpCommitsTogether takes a baseline from a Resource Dump whose
// blob commits are watched: several run at once (a store that groups its
// syncs shares them), every blob is stored, and the changes are queued in
// batches, not one request each.
func TestDumpCommitsTogether(t *testing.T) {
	e := newEnv(t)
	srv := startSim(t, sim.Config{Resources: 600, Seed: 11, PartSize: 300, Dumps: true, MinSize: 10, MaxSize: 500})
	blobs := newWatchedBlobs(t, 0)
	h := e.watchedHarvester(blobs, simSource("s", srv))
	sync1(t, h, "s")
	got := e.drain()
	snap := srv.Snapshot()
	if len(got) != len(snap) {
		t.Fatalf("queued %d changes, want %d", len(got), len(snap))
	}
	for _, c := range got {
		checkStored(t, blobs, c, snap[c.URI])
	}
	if blobs.most < 2 {
		t.Fatalf("at most %d commits ran at once, want several", blobs.most)
	}
	if b := e.pub.batches; b == 0 || b > len(got)/publishBatchSize+2 {
		t.Fatalf("%d changes queued in %d batches", len(got), b)
	}
}

// TestDumpCommitFails fails one blob commit of a Resource Dump's second
// package: the error is counted as the store's, no change of that package
// is queued, and the baseline is taken from the Resource List instead.
func TestDumpCommitFails(t *testing.T) {
	e := newEnv(t)
	srv := startSim(t, sim.Config{Resources: 300, Seed: 12, PartSize: 100, Dumps: true, MinSize: 10, MaxSize: 500})
	blobs := newWatchedBlobs(t, 150)
	h := e.watchedHarvester(blobs, simSource("s", srv))
	sync1(t, h, "s")
	if n := counter(t, h, "errors", "s", kindStore); n != 1 {
		t.Fatalf("store errors counted: %v, want 1", n)
	}
	got := e.drain()
	listed := map[string]bool{}
	for _, c := range got {
		listed[c.URI] = true
		if strings.HasSuffix(c.Doc, "/resourcedump-2.zip") || strings.HasSuffix(c.Doc, "/resourcedump-3.zip") {
			t.Fatalf("%s queued from %s, whose package failed or came after", c.URI, c.Doc)
		}
		if c.Op != resourcesync.Created {
			t.Fatalf("%s queued as %s", c.URI, c.Op)
		}
	}
	if snap := srv.Snapshot(); len(listed) != len(snap) {
		t.Fatalf("%d resources queued after falling back, want %d", len(listed), len(snap))
	}
}
