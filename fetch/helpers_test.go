package fetch

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/internal/testutil/simtest"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/sim"
	"github.com/viaduct-mirror/viaduct/storage"
	"github.com/viaduct-mirror/viaduct/storage/dir"
	"github.com/viaduct-mirror/viaduct/upstream"
)

const (
	testSource     = "sim"
	testCollection = "sim-coll"
)

// eventually waits for cond with the project's one polling helper.
func eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	testutil.Eventually(t, d, what, cond)
}

// startSim serves a simulated Source on loopback for the rest of the test.
func startSim(t testing.TB, cfg sim.Config) *sim.Server {
	t.Helper()
	if cfg.Seed == 0 {
		cfg.Seed = 7
	}
	return simtest.Serve(t, cfg)
}

// clientsFor returns the Client lookup of a node whose only Source is
// testSource at srv, allowed to read from the mirrors given.
func clientsFor(t testing.TB, srv *sim.Server, mirrors ...string) func(string) *upstream.Client {
	t.Helper()
	return clientsForURL(t, srv.URL, mirrors...)
}

// clientsForURL is clientsFor of a Source served at url.
func clientsForURL(t testing.TB, url string, mirrors ...string) func(string) *upstream.Client {
	t.Helper()
	c := sourceClient(t, url, func(cfg *upstream.Config) {
		cfg.MaxAttempts = 1
		cfg.PerHostConcurrency = 64
		cfg.PerHostRate = 1e6
		cfg.PerHostBurst = 1e6
		cfg.AllowedAuthorities = mirrors
		cfg.Sleep = func(context.Context, time.Duration) error { return nil }
	})
	return func(source string) *upstream.Client {
		if source == testSource {
			return c
		}
		return nil
	}
}

// simChanges are "created" changes for the resources of srv, in URI order,
// declared as the Source's lists declare them (faults on declared values
// included), as the harvester would queue them.
func simChanges(t testing.TB, srv *sim.Server) []viaduct.Change {
	t.Helper()
	snap := srv.Snapshot()
	uris := make([]string, 0, len(snap))
	for u := range snap {
		uris = append(uris, u)
	}
	sort.Strings(uris)
	out := make([]viaduct.Change, 0, len(uris))
	for _, u := range uris {
		it := snap[u]
		if it.Deleted {
			continue
		}
		out = append(out, simChange(t, srv, u, it))
	}
	return out
}

func simChange(t testing.TB, srv *sim.Server, uri string, it sim.Item) viaduct.Change {
	t.Helper()
	e, err := srv.Entry(sim.Change{URI: uri, Op: resourcesync.Created, Time: srv.Epoch(), Version: 1, Length: it.Length, SHA256: it.SHA256, MD5: it.MD5})
	if err != nil {
		t.Fatalf("entry of %s: %v", uri, err)
	}
	c := viaduct.Change{Source: testSource, Collection: testCollection, URI: e.Loc, Op: resourcesync.Created, Time: srv.Epoch(), Modified: e.LastMod, Links: e.Links}
	if e.MD != nil {
		c.Hash, c.Length, c.Type = e.MD.Hash, e.MD.Length, e.MD.Type
		if !e.MD.DateTime.IsZero() {
			c.Time = e.MD.DateTime
		}
	}
	return c
}

// resPath is the path of a sim resource URI, as Requests counts it.
func resPath(srv *sim.Server, uri string) string { return uri[len(srv.URL):] }

func publishAll(t testing.TB, q *queue.Queue, cs []viaduct.Change) {
	t.Helper()
	for i := range cs {
		if err := q.PublishChange(context.Background(), &cs[i]); err != nil {
			t.Fatalf("publish change %s: %v", cs[i].URI, err)
		}
	}
}

// streamMsgs is how many messages stream holds now.
func streamMsgs(t testing.TB, q *queue.Queue, stream string) uint64 {
	t.Helper()
	return testutil.StreamMsgs(t, q.JetStream(), stream)
}

// events reads every event on EVENTS, in order.
func events(t testing.TB, q *queue.Queue) []viaduct.Event {
	t.Helper()
	ctx := context.Background()
	s, err := q.JetStream().Stream(ctx, queue.StreamEvents)
	if err != nil {
		t.Fatalf("stream %s: %v", queue.StreamEvents, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatalf("stream info: %v", err)
	}
	var out []viaduct.Event
	for seq := info.State.FirstSeq; seq > 0 && seq <= info.State.LastSeq; seq++ {
		raw, err := s.GetMsg(ctx, seq)
		if err != nil {
			t.Fatalf("event %d: %v", seq, err)
		}
		var ev viaduct.Event
		if err := json.Unmarshal(raw.Data, &ev); err != nil {
			t.Fatalf("decode event %d: %v", seq, err)
		}
		out = append(out, ev)
	}
	return out
}

func deadLetters(t testing.TB, q *queue.Queue) []queue.DeadLetter {
	t.Helper()
	d, err := q.DeadLetters(context.Background(), 1000)
	if err != nil {
		t.Fatalf("dead letters: %v", err)
	}
	return d
}

// testConfig retries at once, so a test sees every delivery quickly.
func testConfig() Config {
	cfg := Defaults()
	cfg.Workers = 4
	cfg.RetryBase = 10 * time.Millisecond
	cfg.RetryMax = 50 * time.Millisecond
	cfg.NotFoundAttempts = 2
	cfg.InProgressEvery = 300 * time.Millisecond
	cfg.DrainTimeout = 5 * time.Second
	return cfg
}

// dirStore is a directory blob store in the test's temporary directory.
func dirStore(t testing.TB) (*dir.Store, string) {
	t.Helper()
	root := t.TempDir()
	s, err := dir.New(root)
	if err != nil {
		t.Fatalf("dir store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, root
}

// blobFiles lists the blobs committed to a directory store, packed or in
// files of their own, as the store lists them.
func blobFiles(t testing.TB, s *dir.Store) []string {
	t.Helper()
	var keys []string
	err := s.List(context.Background(), func(in storage.Info) error {
		keys = append(keys, in.Key)
		return nil
	})
	if err != nil {
		t.Fatalf("listing %s: %v", s.Root(), err)
	}
	sort.Strings(keys)
	return keys
}

// runPool starts a pool on q and stops it when the test ends (or when the
// returned stop is called).
func runPool(t testing.TB, cfg Config, deps Deps) (*Pool, func()) {
	t.Helper()
	return runPoolWith(t, cfg, deps, nil)
}

// runPoolWith is runPool with the pool's metrics registered on reg.
func runPoolWith(t testing.TB, cfg Config, deps Deps, reg prometheus.Registerer) (*Pool, func()) {
	t.Helper()
	p, err := New(cfg, deps, testLogger(t), reg)
	if err != nil {
		t.Fatalf("new pool: %v", err)
	}
	errc := make(chan error, 1)
	go func() { errc <- p.Run(context.Background()) }()
	var stopped bool
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		p.Close()
		if err := <-errc; err != nil {
			t.Errorf("pool run: %v", err)
		}
	}
	t.Cleanup(stop)
	return p, stop
}

// queueDeps are the dependencies of a pool on q.
func queueDeps(t testing.TB, q *queue.Queue, blobs storage.Blobs, clients func(string) *upstream.Client) Deps {
	t.Helper()
	cs, err := q.Changes(context.Background())
	if err != nil {
		t.Fatalf("changes: %v", err)
	}
	return Deps{Changes: cs, Blobs: blobs, Events: q, Client: clients}
}

func startQueue(t testing.TB, opts ...func(*queue.Config)) *queue.Queue {
	return queuetest.Start(t, opts...)
}

func testLogger(t testing.TB) *slog.Logger {
	if os.Getenv("FETCH_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// appliedCatalog is a node's catalog, kept up to date from EVENTS as a
// node keeps it, for the rest of the test.
// caughtUp is a condition for eventually: n events on EVENTS, all of them
// applied to cat, and no change left on CHANGES.
func caughtUp(t testing.TB, q *queue.Queue, cat *catalog.Catalog, n int) func() bool {
	return func() bool {
		last, err := cat.LastApplied(context.Background())
		return err == nil && last == uint64(n) && len(events(t, q)) == n && streamMsgs(t, q, queue.StreamChanges) == 0
	}
}

func appliedCatalog(t testing.TB, q *queue.Queue) *catalog.Catalog {
	t.Helper()
	cat, err := catalog.Open(context.Background(), filepath.Join(t.TempDir(), "catalog.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	applied := make(chan error, 1)
	go func() {
		applied <- q.Events(ctx, 1, func(ctx context.Context, seq uint64, at time.Time, ev *viaduct.Event) error {
			return cat.Apply(ctx, seq, at, ev)
		})
	}()
	t.Cleanup(func() { cancel(); <-applied })
	return cat
}

// publishAndRun queues cs and runs a pool with testConfig on q, blobs and
// srv's client until the test ends.
func publishAndRun(t testing.TB, q *queue.Queue, blobs storage.Blobs, srv *sim.Server, cs []viaduct.Change) {
	t.Helper()
	publishAll(t, q, cs)
	runPool(t, testConfig(), queueDeps(t, q, blobs, clientsFor(t, srv)))
}

// sourceClient is an upstream client confined to the Source at url,
// loopback allowed, with edit applied to the defaults; closed with the
// test.
func sourceClient(t testing.TB, url string, edit func(*upstream.Config)) *upstream.Client {
	t.Helper()
	cfg := upstream.DefaultConfig()
	cfg.AllowLoopback = true
	if edit != nil {
		edit(&cfg)
	}
	base, err := upstream.New(cfg, upstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { base.Close() })
	pol, err := base.NewPolicy(url)
	if err != nil {
		t.Fatal(err)
	}
	return base.WithPolicy(pol)
}
