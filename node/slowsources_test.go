package node

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/sim"
)

// TestSlowSourcesSlowOnlyThemselves: a healthy Source is copied on a calm
// node, then beside a Source whose bitstreams trickle (a KiB every 30s,
// so that none of them ends while the test watches) and four Sources
// whose Resource Lists trickle (a KiB every 2s, holding every harvest
// pass slot), and again once their faults are gone, each time a Source
// of the same shape. A slow Source slows only itself: the healthy Source
// is wholly copied while the slow ones are still being read. The apply
// rates of the three phases are logged; how much of the calm rate the
// node keeps is a figure of speed, measured by BenchmarkSlowPeers, not
// asserted here, where the machine's load varies from phase to phase.
func TestSlowSourcesSlowOnlyThemselves(t *testing.T) {
	calm, during, later := slowSourcesPhases(t)
	t.Logf("apply rate: calm %.0f, beside the slow Sources %.0f, after them %.0f resources/s", calm, during, later)
}

// BenchmarkSlowPeers measures what share of its calm apply rate a node
// keeps beside slow Sources (TestSlowSourcesSlowOnlyThemselves) and
// amid the public listener's crowds (TestSlowPeersOnThePublicListener),
// and once they are gone: docs/security.md states the shares measured.
//
//	go test -run '^$' -bench SlowPeers -benchtime 1x ./node
func BenchmarkSlowPeers(b *testing.B) {
	for range b.N {
		b.Run("sources", func(b *testing.B) {
			calm, during, later := slowSourcesPhases(b)
			b.ReportMetric(calm, "calm-resources/s")
			b.ReportMetric(during/calm, "beside/calm")
			b.ReportMetric(later/calm, "after/calm")
		})
		b.Run("listener", func(b *testing.B) {
			calm, during, later := slowPeersPhases(b)
			b.ReportMetric(calm, "calm-resources/s")
			b.ReportMetric(during/calm, "amid/calm")
			b.ReportMetric(later/calm, "after/calm")
		})
	}
}

// slowSourcesPhases copies a Source of the same shape calm, beside slow
// Sources and after them, and returns the three apply rates.
func slowSourcesPhases(t testing.TB) (calm, during, later float64) {
	// Each phase is long enough (seconds) that the wait for a lent
	// harvest slot (harvest.starved_after, 2s) does not dominate it.
	const size = 2000
	shape := func(seed int64) sim.Config {
		return sim.Config{Resources: size, Seed: seed, MinSize: 200, MaxSize: 400}
	}
	calmSrc, beside, after := startSource(t, shape(1)), startSource(t, shape(2)), startSource(t, shape(3))
	slowBits := startSource(t, sim.Config{Resources: 30, Seed: 4, MinSize: 4 << 10, MaxSize: 8 << 10})
	if err := slowBits.SetFault("/res/*", sim.Fault{Trickle: 30 * time.Second}); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t.TempDir(), sourceConfig("calm", calmSrc), sourceConfig("beside", beside), sourceConfig("after", after), sourceConfig("slowbits", slowBits))
	var slowDocs []*sim.Server
	for i := range 4 {
		s := startSource(t, sim.Config{Resources: 200, Seed: int64(10 + i)})
		if err := s.SetFault(sim.PathResourceList, sim.Fault{Trickle: 2 * time.Second}); err != nil {
			t.Fatal(err)
		}
		slowDocs = append(slowDocs, s)
		cfg.Sources = append(cfg.Sources, sourceConfig(fmt.Sprintf("slowdoc%d", i), s))
	}
	// The defaults' share of workers per host: with as many host slots
	// as workers, a slow host would never be saturated and would keep
	// every worker waiting in its bodies.
	cfg.Harvest.Concurrency = 4
	cfg.Upstream.PerHostConcurrency = 4
	n := startNode(t, cfg, nil)

	calm = sourceApplyRate(t, n, "calm", size)

	// The slow Sources' passes, in the background, until the node closes.
	var wg sync.WaitGroup
	t.Cleanup(func() { n.Close(); wg.Wait() })
	for _, name := range []string{"slowbits", "slowdoc0", "slowdoc1", "slowdoc2", "slowdoc3"} {
		wg.Go(func() {
			resp, err := http.Post(n.AdminURL()+"/admin/sources/"+name+"/sync?wait=true", "text/plain", nil)
			if err == nil {
				resp.Body.Close()
			}
		})
	}
	waitFor(t, time.Minute, "the slow Sources to be read", func() bool {
		for _, s := range slowDocs {
			if s.Requests()[sim.PathResourceList] == 0 {
				return false
			}
		}
		for p := range slowBits.Requests() {
			if len(p) > 5 && p[:5] == "/res/" {
				return true
			}
		}
		return false
	})
	during = sourceApplyRate(t, n, "beside", size)
	if held, _, err := n.Catalog().CountResources(context.Background(), "slowbits"); err != nil || held == 30 {
		t.Fatalf("the trickling Source was copied (%d of 30, %v) before the healthy one: the test no longer shows the healthy one beside it", held, err)
	}

	for _, s := range append(slowDocs, slowBits) {
		s.ClearFaults()
	}
	later = sourceApplyRate(t, n, "after", size)
	return calm, during, later
}

// sourceApplyRate asks for a pass over the named Source, whose baseline
// has want resources, and returns how many it had in the catalog a
// second, from the request until all want are held. Other Sources' work
// may go on meanwhile: only this Source's resources are counted.
func sourceApplyRate(t testing.TB, n *Node, name string, want int) float64 {
	t.Helper()
	start := time.Now()
	mustSync(t, n, name)
	waitApplying(t, n, "every resource of "+name+" applied", func() bool {
		held, _, err := n.Catalog().CountResources(context.Background(), name)
		return err == nil && held == want
	})
	return float64(want) / time.Since(start).Seconds()
}
