package harvester

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/sim"
	"github.com/viaduct-mirror/viaduct/upstream"
)

// env is one test's real parts: a queue, a catalog and an upstream Client.
type env struct {
	t       *testing.T
	q       *queue.Queue
	cat     *catalog.Catalog
	ucfg    upstream.Config
	client  *upstream.Client
	pub     *countingPublisher
	applied uint64
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	cat, err := catalog.Open(ctx, filepath.Join(t.TempDir(), "catalog.db"), nil)
	if err != nil {
		t.Fatalf("open catalog: %v", err)
	}
	t.Cleanup(func() { cat.Close() })
	q := queuetest.Start(t)
	ucfg := upstream.DefaultConfig()
	ucfg.AllowLoopback = true
	ucfg.MaxAttempts = 1
	ucfg.RequestTimeout = 2 * time.Second
	ucfg.ResponseHeaderTimeout = time.Second
	ucfg.PerHostRate = 10000
	ucfg.PerHostBurst = 10000
	ucfg.Sleep = func(context.Context, time.Duration) error { return nil }
	client, err := upstream.New(ucfg, upstream.Options{})
	if err != nil {
		t.Fatalf("upstream client: %v", err)
	}
	t.Cleanup(func() { client.Close() })
	return &env{t: t, q: q, cat: cat, ucfg: ucfg, client: client, pub: &countingPublisher{next: q}}
}

// countingPublisher records every change the harvester asked to queue,
// re-publishes that the stream de-duplicates included.
type countingPublisher struct {
	next    Publisher
	mu      sync.Mutex
	all     []*viaduct.Change
	batches int // calls to PublishChanges
}

var _ Publisher = (*countingPublisher)(nil)

func (c *countingPublisher) PublishChange(ctx context.Context, ch *viaduct.Change) error {
	c.mu.Lock()
	c.all = append(c.all, ch)
	c.mu.Unlock()
	return c.next.PublishChange(ctx, ch)
}

// PublishChanges records a baseline's batch and queues it as one, so
// every test of a baseline goes through the batched path.
func (c *countingPublisher) PublishChanges(ctx context.Context, cs []*viaduct.Change) error {
	c.mu.Lock()
	c.all = append(c.all, cs...)
	c.batches++
	c.mu.Unlock()
	return c.next.(BatchPublisher).PublishChanges(ctx, cs)
}

// take returns the changes attempted since the last take.
func (c *countingPublisher) take() []*viaduct.Change {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.all
	c.all = nil
	return out
}

// simServer is a simulated Source on loopback, with the statuses it
// answered recorded by path.
type simServer struct {
	*sim.Source
	URL string

	mu       sync.Mutex
	statuses map[string][]int
}

// startSim serves a simulated Source on loopback.
func startSim(t *testing.T, cfg sim.Config) *simServer {
	t.Helper()
	src, err := sim.New(cfg)
	if err != nil {
		t.Fatalf("sim: %v", err)
	}
	s := &simServer{Source: src, statuses: map[string][]int{}}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		src.Handler().ServeHTTP(rec, r)
		s.mu.Lock()
		s.statuses[r.URL.Path] = append(s.statuses[r.URL.Path], rec.status)
		s.mu.Unlock()
	}))
	t.Cleanup(ts.Close)
	s.URL = ts.URL
	if err := src.SetBaseURL(ts.URL); err != nil {
		t.Fatalf("sim base URL: %v", err)
	}
	return s
}

// takeStatuses returns the statuses answered since the last call.
func (s *simServer) takeStatuses() map[string][]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.statuses
	s.statuses = map[string][]int{}
	return out
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func yes() *bool { b := true; return &b }

// harvester builds a Harvester over e for sources, with its own registry.
func (e *env) harvester(cfg Config, sources ...SourceConfig) (*Harvester, *prometheus.Registry) {
	e.t.Helper()
	reg := prometheus.NewRegistry()
	h, err := New(cfg, sources, Deps{Client: e.client, Upstream: e.ucfg, Cursors: e.cat, Held: e.cat, Publisher: e.pub}, slog.New(slog.DiscardHandler), reg)
	if err != nil {
		e.t.Fatalf("New: %v", err)
	}
	e.t.Cleanup(func() { h.Close() })
	return h, reg
}

// simSource is the SourceConfig of a sim server, loopback allowed.
func simSource(name string, srv *simServer) SourceConfig {
	return SourceConfig{Name: name, URL: srv.URL, AllowLoopback: yes()}
}

// drain reads every change now on CHANGES through the work-queue consumer,
// acks it, and returns them in stream order.
func (e *env) drain() []*viaduct.Change {
	e.t.Helper()
	type seqd struct {
		seq uint64
		c   *viaduct.Change
	}
	var got []seqd
	e.takeAll(func(ctx context.Context, m *queue.ChangeMsg) {
		if err := m.Ack(ctx); err != nil {
			e.t.Fatalf("ack: %v", err)
		}
		got = append(got, seqd{m.Seq, m.Change})
	})
	// Changes come in the order of their messages, and a group's in its
	// own order.
	sort.SliceStable(got, func(i, j int) bool { return got[i].seq < got[j].seq })
	out := make([]*viaduct.Change, len(got))
	for i, g := range got {
		out[i] = g.c
	}
	return out
}

// takeAll takes every change now on CHANGES through the work-queue
// consumer and gives it to verdict, which acks or dead-letters it. A
// message may hold a group of changes: it takes changes until none comes,
// then goes on until the stream is empty once their acks are in (the next
// caller counts what the stream holds).
func (e *env) takeAll(verdict func(context.Context, *queue.ChangeMsg)) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if testutil.StreamMsgs(e.t, e.q.JetStream(), queue.StreamChanges) == 0 {
		return
	}
	cs, err := e.q.Changes(ctx)
	if err != nil {
		e.t.Fatalf("changes: %v", err)
	}
	for testutil.StreamMsgs(e.t, e.q.JetStream(), queue.StreamChanges) > 0 {
		for m := nextOrNone(ctx, e.t, cs); m != nil; m = nextOrNone(ctx, e.t, cs) {
			verdict(ctx, m)
		}
		testutil.AcksTaken(e.t, e.q.JetStream(), queue.StreamChanges)
	}
}

// nextOrNone takes the next change, or nil when none comes within a
// moment.
func nextOrNone(ctx context.Context, t testing.TB, cs *queue.ChangeStream) *queue.ChangeMsg {
	t.Helper()
	nctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := time.AfterFunc(300*time.Millisecond, cancel)
	defer stop.Stop()
	m, err := cs.Next(nctx)
	if err != nil {
		if nctx.Err() != nil && ctx.Err() == nil {
			return nil
		}
		t.Fatalf("read a change: %v", err)
	}
	return m
}

// apply plays the fetch workers: it records each change in the catalog as
// an event, as if its bitstream had been stored.
func (e *env) apply(changes []*viaduct.Change) {
	e.t.Helper()
	ctx := context.Background()
	for _, c := range changes {
		e.applied++
		ev := &viaduct.Event{Source: c.Source, Collection: c.Collection, URI: c.URI, Op: c.Op, Type: c.Type, Upstream: *c}
		if c.Op != resourcesync.Deleted {
			ev.SHA256, ev.MD5 = c.Hash.Get(resourcesync.SHA256), c.Hash.Get(resourcesync.MD5)
			if c.Length != nil {
				ev.Length = *c.Length
			}
		}
		if err := e.cat.Apply(ctx, e.applied, time.Now(), ev); err != nil {
			e.t.Fatalf("apply %s %s: %v", c.Op, c.URI, err)
		}
	}
}

// sync runs one pass and fails the test on error.
func sync1(t *testing.T, h *Harvester, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := h.SyncOnce(ctx, name); err != nil {
		t.Fatalf("SyncOnce(%s): %v", name, err)
	}
}

// counter reads one labelled counter of the harvester's metrics.
func counter(t *testing.T, h *Harvester, vec string, labels ...string) float64 {
	t.Helper()
	vecs := map[string]*prometheus.CounterVec{"changes": h.m.changes, "errors": h.m.errors, "attempts": h.m.attempts, "passes": h.m.passes}
	var m dto.Metric
	if err := vecs[vec].WithLabelValues(labels...).Write(&m); err != nil {
		t.Fatalf("metric %s: %v", vec, err)
	}
	return m.GetCounter().GetValue()
}

// expected coalesces sim changes as the harvester does: several changes of
// one URI become the last, at the last one's place.
func expected(changes []sim.Change) []sim.Change {
	last := map[string]int{}
	for i, c := range changes {
		last[c.URI] = i
	}
	var out []sim.Change
	for i, c := range changes {
		if last[c.URI] == i {
			out = append(out, c)
		}
	}
	return out
}

// eventually waits for cond with the project's one polling helper.
func eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	testutil.Eventually(t, d, what, cond)
}

// counterVec reads one labelled counter of a vector.
func counterVec(t *testing.T, vec *prometheus.CounterVec, labels ...string) float64 {
	t.Helper()
	var m dto.Metric
	if err := vec.WithLabelValues(labels...).Write(&m); err != nil {
		t.Fatalf("metric: %v", err)
	}
	return m.GetCounter().GetValue()
}
