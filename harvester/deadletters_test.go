package harvester

import (
	"context"
	"log/slog"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/sim"
)

// deadEnv is a harvester over a real queue and catalog whose passes bring
// dead letters back, with its log and metrics.
type deadEnv struct {
	*env
	h   *Harvester
	reg *prometheus.Registry
	log *testutil.Buffer
}

func newDeadEnv(t *testing.T, retries int, src *simServer) *deadEnv {
	e := newEnv(t)
	cfg := Defaults()
	cfg.DeadLetterRetries = retries
	reg := prometheus.NewRegistry()
	buf := &testutil.Buffer{}
	h, err := New(cfg, []SourceConfig{simSource("s", src)},
		Deps{Client: e.client, Upstream: e.ucfg, Cursors: e.cat, Held: e.cat, Publisher: e.pub, DeadLetters: e.q},
		slog.New(slog.NewJSONHandler(buf, nil)), reg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { h.Close() })
	return &deadEnv{env: e, h: h, reg: reg, log: buf}
}

// deadLetterAll takes every change on CHANGES and dead-letters it, with
// reason(uri), as a fetch worker out of deliveries does.
func (e *deadEnv) deadLetterAll(reason func(uri string) string) []*viaduct.Change {
	e.t.Helper()
	var out []*viaduct.Change
	e.takeAll(func(ctx context.Context, m *queue.ChangeMsg) {
		if err := m.DeadLetter(ctx, reason(m.Change.URI), map[string]string{"uri": m.Change.URI}); err != nil {
			e.t.Fatalf("dead-letter %s: %v", m.Change.URI, err)
		}
		out = append(out, m.Change)
	})
	sort.Slice(out, func(i, j int) bool { return out[i].URI < out[j].URI })
	return out
}

// dead is the URIs on DEADLETTER, with how many times each came back.
func (e *deadEnv) dead() map[string]int {
	e.t.Helper()
	dls, err := e.q.DeadLetters(context.Background(), 1000)
	if err != nil {
		e.t.Fatalf("dead letters: %v", err)
	}
	out := map[string]int{}
	for _, d := range dls {
		out[d.Evidence["uri"]] = d.Retries
	}
	return out
}

func (e *deadEnv) outcome(o string) float64 {
	v, _ := testutil.Metric(e.t, e.reg, "viaduct_harvester_dead_letters_total", map[string]string{"source": "s", "outcome": o})
	return v
}

func (e *deadEnv) summaries() int {
	return strings.Count(e.log.String(), `"msg":"dead letters looked at after a pass that ended well"`)
}

// TestDeadLettersComeBackAfterAPass: after a pass that ends well, the
// Source's dead letters are queued again, except those the catalog has
// moved past (dropped, with the reason in the summary) and those of a kind
// a recovery does not fix (kept); a change that has come back as often as
// allowed is kept; each pass writes one summary line, and none when
// nothing changed.
func TestDeadLettersComeBackAfterAPass(t *testing.T) {
	src := startSim(t, sim.Config{Resources: 6, Seed: 161})
	var uris []string
	for uri := range src.Snapshot() {
		uris = append(uris, uri)
	}
	sort.Strings(uris)
	transient := func(string) string { return "transient: upstream answered 503" }
	e := newDeadEnv(t, 1, src)
	sync1(t, e.h, "s")
	changes := e.deadLetterAll(func(uri string) string {
		if uri == uris[5] {
			return "forbidden: outside the Source's authorities"
		}
		return transient(uri)
	})
	if len(changes) != 6 || changes[5].URI != uris[5] {
		t.Fatalf("%d changes dead-lettered, want 6", len(changes))
	}
	// The catalog moves past two of them: a later update, a later deletion.
	// A baseline's change is placed at its list's at (Listed).
	later := *changes[0]
	later.Op, later.Time, later.Listed = resourcesync.Updated, changes[0].Listed.Add(time.Hour), time.Time{}
	gone := *changes[1]
	gone.Op, gone.Time, gone.Listed, gone.Hash, gone.Length = resourcesync.Deleted, changes[1].Listed.Add(time.Hour), time.Time{}, nil, nil
	e.apply([]*viaduct.Change{&later, &gone})

	sync1(t, e.h, "s")
	if d := e.dead(); len(d) != 1 || d[uris[5]] != 0 {
		t.Errorf("dead letters left %v, want only the forbidden %s", d, uris[5])
	}
	// The three queued again fail again, as a worker out of deliveries
	// would find them: their dead letters say they came back once.
	back := e.deadLetterAll(transient)
	if len(back) != 3 || back[0].URI != uris[2] || back[1].URI != uris[3] || back[2].URI != uris[4] {
		t.Errorf("queued again: %v, want %v", uriList(back), uris[2:5])
	}
	if d := e.dead(); len(d) != 4 || d[uris[2]] != 1 || d[uris[3]] != 1 || d[uris[4]] != 1 {
		t.Errorf("dead letters %v, want %v once come back each", d, uris[2:5])
	}
	for o, want := range map[string]float64{deadRequeued: 3, deadSuperseded: 2, deadGaveUp: 1} {
		if got := e.outcome(o); got != want {
			t.Errorf("after one pass, %s: %v, want %v", o, got, want)
		}
	}
	logged := e.log.String()
	if e.summaries() != 1 || !strings.Contains(logged, "deleted later") || !strings.Contains(logged, "a later change is held") {
		t.Errorf("want one summary naming why two were dropped, got:\n%s", logged)
	}

	// Come back as often as allowed (once): kept, and counted once.
	sync1(t, e.h, "s")
	if d := e.dead(); len(d) != 4 {
		t.Errorf("dead letters left %v, want the forbidden one and the three out of comebacks", d)
	}
	if n := testutil.StreamMsgs(t, e.q.JetStream(), queue.StreamChanges); n != 0 {
		t.Errorf("%d changes queued, want none", n)
	}
	for o, want := range map[string]float64{deadRequeued: 3, deadSuperseded: 2, deadGaveUp: 4} {
		if got := e.outcome(o); got != want {
			t.Errorf("after two passes, %s: %v, want %v", o, got, want)
		}
	}
	sync1(t, e.h, "s")
	if e.summaries() != 2 {
		t.Errorf("%d summary lines after three passes, want 2 (nothing new at the third)", e.summaries())
	}
	if e.outcome(deadGaveUp) != 4 {
		t.Errorf("kept letters counted again at the third pass")
	}
}

func uriList(cs []*viaduct.Change) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.URI
	}
	return out
}
