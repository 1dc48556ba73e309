package node

import (
	"context"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/sim"
	"github.com/viaduct-mirror/viaduct/websub"
)

// BenchmarkPushLatency measures the push path on loopback: from a change
// at the simulated Source to its event applied in the node's catalog,
// through the Source's hub, the node's callback, CHANGES, a fetch worker
// and EVENTS (p50-ms, p99-ms), and on to a downstream subscriber
// receiving the node's notification of it, through the notifier and the
// node's hub (down-p50-ms, down-p99-ms). Changes come at 100 per second,
// b.N of them but at least 1,000, so one iteration is a full
// measurement.
//
//	go test ./node -run '^$' -bench BenchmarkPushLatency -benchtime 1x
func BenchmarkPushLatency(b *testing.B) {
	src, hub := startPushSource(b, sim.Config{Resources: 2000, Seed: 21, MinSize: 256, MaxSize: 4096})
	cfg := pushConfig(b, src, 0)
	cfg.Republish.Notify.AllowLoopbackCallbacks = true
	var logs logBuffer
	n := startNode(b, cfg, logs.logger())
	b.Cleanup(func() {
		if b.Failed() {
			for _, r := range logs.records(map[string]string{}) {
				if r["level"] != "DEBUG" {
					b.Log(r)
				}
			}
			for uri, it := range src.Snapshot() {
				r, err := n.Catalog().Resource(context.Background(), "s", uri)
				if err != nil || r.SHA256 != it.SHA256 {
					b.Logf("differs: %s src %s catalog %+v %v", uri, it.SHA256, r, err)
				}
			}
			b.Logf("changes queued %d, settled %v", streamMsgs(b, n.Queue(), "CHANGES"), settled(b, n))
		}
	})
	down := startTimedDownstream(b)
	down.subscribe(b, n.URL()+"/hub", n.URL()+"/s/notifications")
	mustSync(b, n, "s")
	waitFor(b, 10*time.Second, "the subscription", func() bool { return hub.Subscribers() == 1 })
	src.Update(1)
	waitFor(b, 30*time.Second, "the first catch-up", func() bool { return mirrors(b, n, "s", src) })

	count := max(b.N, 1000)
	type key struct{ uri, sha string }
	var (
		mu      sync.Mutex
		started = map[key]time.Time{}
		seqKey  = map[uint64]key{}
		lat     []time.Duration
	)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go n.Queue().Events(ctx, lastApplied(b, n)+1, func(_ context.Context, seq uint64, _ time.Time, ev *viaduct.Event) error {
		mu.Lock()
		seqKey[seq] = key{ev.URI, ev.SHA256}
		mu.Unlock()
		return nil
	})
	done := make(chan struct{})
	go func() { // notes when each event is applied to the catalog
		defer close(done)
		seen := lastApplied(b, n)
		poll := time.NewTicker(time.Millisecond)
		defer poll.Stop()
		for ctx.Err() == nil {
			applied, err := n.Catalog().LastApplied(ctx)
			if err == nil && applied > seen {
				now := time.Now()
				mu.Lock()
				for s := seen + 1; s <= applied; s++ {
					if t, ok := started[seqKey[s]]; ok {
						lat = append(lat, now.Sub(t))
					}
				}
				mu.Unlock()
				seen = applied
			}
			select {
			case <-ctx.Done():
			case <-poll.C:
			}
		}
	}()

	b.ReportAllocs()
	b.ResetTimer()
	tick := time.NewTicker(10 * time.Millisecond)
	for range count {
		<-tick.C
		t0 := time.Now()
		for _, c := range src.Update(1) {
			mu.Lock()
			started[key{c.URI, c.SHA256}] = t0
			mu.Unlock()
			down.expect(c.URI, c.SHA256, t0)
		}
	}
	tick.Stop()
	waitFor(b, 60*time.Second, "the copy to match the Source", func() bool { return mirrors(b, n, "s", src) })
	checkMirror(b, n, "s", src)
	waitFor(b, 30*time.Second, "the changes to reach the downstream subscriber", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return down.timed() >= len(lat)
	})
	b.StopTimer()
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if len(lat) < count*9/10 {
		b.Fatalf("%d of %d changes were timed", len(lat), count)
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))]) / float64(time.Millisecond) }
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(len(lat)), "timed")
	dl := down.latencies()
	if len(dl) < count*9/10 {
		b.Fatalf("%d of %d changes were timed downstream", len(dl), count)
	}
	b.ReportMetric(float64(len(dl)), "down-timed")
	b.ReportMetric(percentile(dl, 0.50), "down-p50-ms")
	b.ReportMetric(percentile(dl, 0.99), "down-p99-ms")
	b.ReportMetric(0, "ns/op")
}

// percentile is the p-th quantile of sorted latencies, in milliseconds.
func percentile(lat []time.Duration, p float64) float64 {
	if len(lat) == 0 {
		return 0
	}
	return float64(lat[int(p*float64(len(lat)-1))]) / float64(time.Millisecond)
}

// timedDownstream is a Destination subscribed to a node's topic that
// notes, for each expected origin change (origin URI and sha-256), how
// long after it was made the first notification naming it came: the
// node's entries name the origin's change in their via links.
type timedDownstream struct {
	srv *httptest.Server
	sub *websub.Subscriber

	mu      sync.Mutex
	started map[[2]string]time.Time
	lat     []time.Duration
}

func startTimedDownstream(t testing.TB) *timedDownstream {
	t.Helper()
	d := &timedDownstream{started: map[[2]string]time.Time{}}
	d.srv, d.sub = startSubscriber(t, d.took)
	return d
}

// subscribe subscribes to topic at hub and waits for the verification.
func (d *timedDownstream) subscribe(t testing.TB, hub, topic string) {
	t.Helper()
	subscribeVerified(t, d.sub, hub, topic)
}

// expect notes that the origin changed uri to bytes hashing to sha at t0.
func (d *timedDownstream) expect(uri, sha string, t0 time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.started[[2]string{uri, sha}] = t0
}

func (d *timedDownstream) took(_ context.Context, _ websub.Sub, _ *resourcesync.Header, entries []*resourcesync.Entry) error {
	now := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, e := range entries {
		via := e.Link("via")
		if via == nil {
			continue
		}
		k := [2]string{via.Href, via.Hash.Get(resourcesync.SHA256)}
		if t0, ok := d.started[k]; ok {
			d.lat = append(d.lat, now.Sub(t0))
			delete(d.started, k)
		}
	}
	return nil
}

// timed is how many expected changes have been notified.
func (d *timedDownstream) timed() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.lat)
}

// latencies are the times taken, sorted.
func (d *timedDownstream) latencies() []time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := slices.Clone(d.lat)
	slices.Sort(out)
	return out
}
