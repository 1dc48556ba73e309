package node

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/sim"
)

// BenchmarkPushLatency measures the push path on loopback: from a change
// at the simulated Source to its event applied in the node's catalog,
// through the Source's hub, the node's callback, CHANGES, a fetch worker
// and EVENTS. Changes come at 100 per second, b.N of them but at least
// 1,000, so one iteration is a full measurement; p50 and p99 are
// reported.
//
//	go test ./node -run '^$' -bench BenchmarkPushLatency -benchtime 1x
func BenchmarkPushLatency(b *testing.B) {
	src, hub := startPushSource(b, sim.Config{Resources: 2000, Seed: 21, MinSize: 256, MaxSize: 4096})
	n := startNode(b, pushConfig(b, src, 0), nil)
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
		}
	}
	tick.Stop()
	waitFor(b, 60*time.Second, "the copy to match the Source", func() bool { return mirrors(b, n, "s", src) })
	checkMirror(b, n, "s", src)
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
	b.ReportMetric(0, "ns/op")
}
