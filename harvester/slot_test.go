package harvester

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/sim"
	"github.com/viaduct-mirror/viaduct/upstream"
)

// slowEnv is an environment whose upstream client waits on a slow Source
// for as long as a test needs: a long request timeout and no minimum
// body rate, so that only what the test exercises ends a pass.
func slowEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	e.ucfg.RequestTimeout = 5 * time.Minute
	e.ucfg.BodyRateWindow = 0
	client, err := upstream.New(e.ucfg, upstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	e.client = client
	return e
}

// TestSlowDocumentsHoldNoSlot: four Sources whose Resource Lists trickle
// (a KiB every 5s, about two minutes a list) run their passes with
// concurrency 4, every slot theirs. A healthy Source's pass still runs
// and queues its whole baseline within 30s (under a second on an idle
// machine): the slow passes lend their slots while they wait. No minimum
// body rate is set, so the slots alone are shown.
func TestSlowDocumentsHoldNoSlot(t *testing.T) {
	e := slowEnv(t)

	var sources []SourceConfig
	for i := range 4 {
		slow := startSim(t, sim.Config{Resources: 100, Seed: int64(10 + i)})
		if err := slow.SetFault(sim.PathResourceList, sim.Fault{Trickle: 5 * time.Second}); err != nil {
			t.Fatal(err)
		}
		sources = append(sources, simSource(fmt.Sprintf("slow%d", i), slow))
	}
	healthy := startSim(t, sim.Config{Resources: 50, Seed: 2})
	cfg := Defaults()
	cfg.Concurrency = 4
	cfg.StarvedAfter = 200 * time.Millisecond
	h, _ := e.harvester(cfg, append(sources, simSource("healthy", healthy))...)

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, s := range sources {
		wg.Go(func() { h.SyncOnce(ctx, s.Name) })
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
	// Every slow pass is reading its list.
	eventually(t, 20*time.Second, "the four slow passes to be reading their lists", func() bool {
		n := 0
		for _, s := range sources {
			if st := h.sources[s.Name]; !st.mu.TryLock() {
				n++
			} else {
				st.mu.Unlock()
			}
		}
		return n == 4
	})

	hctx, hcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer hcancel()
	start := time.Now()
	if err := h.SyncOnce(hctx, "healthy"); err != nil {
		t.Fatalf("healthy pass beside four slow ones: %v", err)
	}
	t.Logf("healthy pass took %s beside four trickling ones", time.Since(start).Round(time.Millisecond))
	n := 0
	for _, c := range e.pub.take() {
		if c.Source == "healthy" {
			n++
		}
	}
	if n != 50 {
		t.Fatalf("healthy Source queued %d changes, want 50", n)
	}
}
