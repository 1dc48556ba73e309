package fetch

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/sim"
	"github.com/viaduct-mirror/viaduct/storage/dir"
	"github.com/viaduct-mirror/viaduct/upstream"
)

// twoSources is the Client lookup of a node with Sources "slow" and
// "healthy" served at two authorities, with no minimum body rate, so that
// only the scheduling keeps the healthy one moving. The slow host has two
// slots, the healthy one a slot per worker: the healthy host is never
// saturated, so that none of its changes is handed back for busy_retry
// (which the test sets beyond its own length) however slowly a loaded
// machine serves it; only the slow host's changes can hold workers.
func twoSources(t *testing.T, slow, healthy *sim.Server, workers int) func(string) *upstream.Client {
	t.Helper()
	clients := map[string]*upstream.Client{}
	for name, srv := range map[string]*sim.Server{"slow": slow, "healthy": healthy} {
		clients[name] = sourceClient(t, srv.URL, func(cfg *upstream.Config) {
			cfg.MaxAttempts = 1
			cfg.PerHostConcurrency = map[string]int{"slow": 2, "healthy": workers}[name]
			cfg.PerHostRate, cfg.PerHostBurst = 1e6, 1e6
			cfg.BodyRateWindow = 0
		})
	}
	return func(source string) *upstream.Client { return clients[source] }
}

func renamed(cs []viaduct.Change, source string) []viaduct.Change {
	for i := range cs {
		cs[i].Source = source
	}
	return cs
}

// TestSlowSourceSlowsOnlyItself: a Source whose bitstreams trickle (a
// KiB every 5s: 20s a bitstream) is queued first, 30 changes, ahead of a
// healthy Source's 100. Eight workers, two slots on the slow host: with workers
// waiting on the slow host, the healthy Source would get nothing for
// minutes. Parked (the lot has room), or handed back once (the lot is
// full), the slow changes leave the workers free: every healthy change is
// stored within 60s (a few seconds on an idle machine), and nothing is
// dead-lettered for the congestion.
func TestSlowSourceSlowsOnlyItself(t *testing.T) {
	for _, tc := range []struct {
		name      string
		maxParked int
	}{{"parked", 512}, {"handed back", 4}} {
		t.Run(tc.name, func(t *testing.T) {
			slow := startSim(t, sim.Config{Resources: 30, MinSize: 4096, MaxSize: 4096})
			healthy := startSim(t, sim.Config{Resources: 100, MinSize: 500, MaxSize: 1000})
			slowChanges := renamed(simChanges(t, slow), "slow")
			trickle(t, slow, slowChanges, 5*time.Second)
			q := startQueue(t)
			store, _ := dirStore(t)
			publishAll(t, q, slowChanges)
			publishAll(t, q, renamed(simChanges(t, healthy), "healthy"))

			cfg := testConfig()
			cfg.Workers = 8
			cfg.MaxParked = tc.maxParked
			cfg.HostWait = 100 * time.Millisecond
			cfg.BusyRetry = 5 * time.Minute // not back within the test
			runPool(t, cfg, queueDeps(t, q, store, twoSources(t, slow, healthy, cfg.Workers)))

			start := time.Now()
			healthyStored(t, q, 100)
			t.Logf("100 healthy changes stored in %s beside 30 trickling ones", time.Since(start).Round(time.Millisecond))
			for _, e := range events(t, q) {
				if e.Source == "slow" {
					t.Errorf("a trickling bitstream (%s) stored within the test", e.URI)
				}
			}
		})
	}
}

// TestParkedGroupsTakeOnePlaceEach: a slow Source's baseline, 64 changes
// in two groups, is queued ahead of a healthy Source's 100. The lot has
// room for eight messages, two a host; a worker that cannot park a change
// waits host_wait, here longer than the test. Counted in changes, the lot
// would take two of the slow Source's and leave every other worker
// waiting on its host; counted in messages, as the consumer's pending
// window counts them, both groups wait in the lot and the workers serve
// the healthy Source meanwhile.
func TestParkedGroupsTakeOnePlaceEach(t *testing.T) {
	slow := startSim(t, sim.Config{Resources: 64, MinSize: 4096, MaxSize: 4096})
	healthy := startSim(t, sim.Config{Resources: 100, MinSize: 500, MaxSize: 1000})
	slowChanges := renamed(simChanges(t, slow), "slow")
	trickle(t, slow, slowChanges, 5*time.Second)
	q := startQueue(t)
	store, _ := dirStore(t)
	batch := make([]*viaduct.Change, len(slowChanges))
	for i := range slowChanges {
		batch[i] = &slowChanges[i]
	}
	if err := q.PublishChanges(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	if n := streamMsgs(t, q, queue.StreamChanges); n != 2 {
		t.Fatalf("the slow Source's 64 changes are %d messages of CHANGES, want 2 groups", n)
	}
	publishAll(t, q, renamed(simChanges(t, healthy), "healthy"))

	cfg := testConfig()
	cfg.Workers = 4
	cfg.MaxParked = 8
	cfg.HostWait = 10 * time.Minute // a change not parked holds its worker
	cfg.BusyRetry = 10 * time.Minute
	runPool(t, cfg, queueDeps(t, q, store, twoSources(t, slow, healthy, cfg.Workers)))

	healthyStored(t, q, 100)
}

// trickle has srv send each of changes' bitstreams over d.
func trickle(t *testing.T, srv *sim.Server, changes []viaduct.Change, d time.Duration) {
	t.Helper()
	for _, c := range changes {
		if err := srv.SetFault(resPath(srv, c.URI), sim.Fault{Trickle: d}); err != nil {
			t.Fatal(err)
		}
	}
}

// healthyStored waits up to 60s (a few seconds on an idle machine) for n
// changes of Source "healthy" stored, and checks that nothing was
// dead-lettered for the congestion.
func healthyStored(t *testing.T, q *queue.Queue, n int) {
	t.Helper()
	eventually(t, 60*time.Second, "every healthy change stored", func() bool {
		got := 0
		for _, e := range events(t, q) {
			if e.Source == "healthy" {
				got++
			}
		}
		return got == n
	})
	if dl := deadLetters(t, q); len(dl) != 0 {
		t.Errorf("%d changes dead-lettered, want none: %+v", len(dl), dl[0])
	}
}

// TestBusyAttemptsAreNotTimed: an attempt that finds every slot of its
// host taken sends nothing, so viaduct_fetch_duration_seconds counts one
// GET per change however often its change was parked on the way.
func TestBusyAttemptsAreNotTimed(t *testing.T) {
	slow := startSim(t, sim.Config{Resources: 16, MinSize: 1024, MaxSize: 1024})
	healthy := startSim(t, sim.Config{Resources: 1, MinSize: 100, MaxSize: 100})
	changes := renamed(simChanges(t, slow), "slow")
	trickle(t, slow, changes, 200*time.Millisecond)
	q := startQueue(t)
	store, _ := dirStore(t)
	publishAll(t, q, changes)

	cfg := testConfig()
	cfg.Workers = 8 // the slow host has two slots: six workers find it busy
	reg := prometheus.NewRegistry()
	runPoolWith(t, cfg, queueDeps(t, q, store, twoSources(t, slow, healthy, cfg.Workers)), reg)

	eventually(t, 60*time.Second, "every slow change stored", func() bool {
		return len(events(t, q)) == len(changes)
	})
	var timed uint64
	var parked float64
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			switch f.GetName() {
			case "viaduct_fetch_duration_seconds":
				timed += m.GetHistogram().GetSampleCount()
			case "viaduct_fetch_parked_total":
				parked += m.GetCounter().GetValue()
			}
		}
	}
	if parked == 0 {
		t.Fatal("no change was parked: the test did not make the host busy")
	}
	if timed != uint64(len(changes)) {
		t.Errorf("viaduct_fetch_duration_seconds counted %d attempts for %d GETs (%v parked on the way)", timed, len(changes), parked)
	}
}

// TestEverySourceQueuedFindsAPlace: six Sources' baselines, two groups of
// 32 changes each, are queued one after another, and every host allows
// one request at a time at 16 a second, so that each Source takes 4s or more
// however many workers there are. The lot holds every message queued, as
// fetch.max_parked holds what the harvester queues at the defaults, and
// a worker that could not park a change would wait on its host for
// longer than the test: the workers park what they cannot fetch yet and
// go on down the queue, so every Source has a bitstream stored before
// any Source is done. A lot smaller than the queue kept the Sources
// queued last waiting for the first ones to drain.
func TestEverySourceQueuedFindsAPlace(t *testing.T) {
	const sources, each = 6, 2 * queue.GroupMax
	q, store, clients := rateBoundSources(t, sources, each, 16)
	cfg := testConfig()
	cfg.Workers = 3
	cfg.MaxParked = 2 * sources
	cfg.HostWait = 10 * time.Minute // a change not parked holds its worker
	cfg.BusyRetry = 10 * time.Minute
	runPool(t, cfg, queueDeps(t, q, store, func(s string) *upstream.Client { return clients[s] }))

	start := time.Now()
	firsts := map[string]time.Duration{}
	eventually(t, 2*time.Minute, "every Source's changes stored", func() bool {
		stored := map[string]int{}
		for _, e := range events(t, q) {
			stored[e.Source]++
		}
		done, all := "", true
		for i := range sources {
			name := fmt.Sprintf("s%d", i)
			if _, ok := firsts[name]; !ok && stored[name] > 0 {
				firsts[name] = time.Since(start)
			}
			if stored[name] == each && done == "" {
				done = name
			}
			all = all && stored[name] == each
		}
		if done != "" && len(firsts) < sources {
			t.Fatalf("%s is done while only %d of %d Sources have a bitstream stored (%v)", done, len(firsts), sources, firsts)
		}
		return all
	})
	t.Logf("first bitstream of each Source stored after %v", firsts)
	if dl := deadLetters(t, q); len(dl) != 0 {
		t.Errorf("%d changes dead-lettered, want none: %+v", len(dl), dl[0])
	}
}

// rateBoundSources starts sources simulated Sources of each resources,
// s0, s1, ..., each host allowing one request at a time at rate a
// second, and queues their baselines one after another, in groups as
// the harvester does.
func rateBoundSources(t testing.TB, sources, each int, rate float64) (*queue.Queue, *dir.Store, map[string]*upstream.Client) {
	t.Helper()
	q := startQueue(t)
	store, _ := dirStore(t)
	clients := map[string]*upstream.Client{}
	for i := range sources {
		name := fmt.Sprintf("s%d", i)
		srv := startSim(t, sim.Config{Resources: each, MinSize: 100, MaxSize: 200, Seed: int64(i + 1)})
		clients[name] = sourceClient(t, srv.URL, func(cfg *upstream.Config) {
			cfg.PerHostConcurrency = 1
			cfg.PerHostRate, cfg.PerHostBurst = rate, 1
		})
		changes := renamed(simChanges(t, srv), name)
		batch := make([]*viaduct.Change, len(changes))
		for j := range changes {
			batch[j] = &changes[j]
		}
		if err := q.PublishChanges(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
	}
	return q, store, clients
}

// BenchmarkFewWorkersManyPoliteHosts: three workers fetch six Sources'
// baselines of 64 changes, each host allowing one request at a time at 16
// a second, so that the hosts' politeness allows it all in 3.94 s.
// Reported: the wall time as a multiple of that bound (x-bound). With
// the workers looking at the lot every 500 ms it was 5.2x; with the
// lot's watcher back when a host's rate allows the next request, 1.1x.
func BenchmarkFewWorkersManyPoliteHosts(b *testing.B) {
	const sources, each, rate = 6, 2 * queue.GroupMax, 16.0
	bound := time.Duration(float64(each-1) / rate * float64(time.Second))
	var total time.Duration
	for range b.N {
		b.StopTimer()
		q, store, clients := rateBoundSources(b, sources, each, rate)
		cfg := testConfig()
		cfg.Workers = 3
		cfg.MaxParked = 2 * sources
		b.StartTimer()
		start := time.Now()
		_, stop := runPool(b, cfg, queueDeps(b, q, store, func(s string) *upstream.Client { return clients[s] }))
		eventually(b, 2*time.Minute, "every change stored", func() bool { return len(events(b, q)) == sources*each })
		total += time.Since(start)
		b.StopTimer()
		stop()
	}
	b.ReportMetric(float64(total)/float64(b.N)/float64(bound), "x-bound")
}
