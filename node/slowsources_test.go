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

// TestSlowSourcesKeepTheApplyRate: the node's apply rate for a healthy
// Source, measured first on a calm node, then beside a Source whose
// bitstreams trickle (a KiB every 5s) and four Sources whose Resource
// Lists trickle (a KiB every 2s, holding every harvest pass slot), and
// again once their faults are gone, each time for a Source of the same
// shape. Beside the slow Sources and after them the rate must stay at
// least a quarter of the calm one (docs/security.md): a slow Source slows
// only itself.
func TestSlowSourcesKeepTheApplyRate(t *testing.T) {
	// Each phase is long enough (seconds) that the wait for a lent
	// harvest slot (harvest.starved_after, 2s) does not dominate it.
	const size = 2000
	shape := func(seed int64) sim.Config {
		return sim.Config{Resources: size, Seed: seed, MinSize: 200, MaxSize: 400}
	}
	calmSrc, beside, after := startSource(t, shape(1)), startSource(t, shape(2)), startSource(t, shape(3))
	slowBits := startSource(t, sim.Config{Resources: 30, Seed: 4, MinSize: 4 << 10, MaxSize: 8 << 10})
	if err := slowBits.SetFault("/res/*", sim.Fault{Trickle: 5 * time.Second}); err != nil {
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

	calm := sourceApplyRate(t, n, "calm", size)

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
	during := sourceApplyRate(t, n, "beside", size)

	for _, s := range append(slowDocs, slowBits) {
		s.ClearFaults()
	}
	later := sourceApplyRate(t, n, "after", size)
	t.Logf("apply rate: calm %.0f, beside the slow Sources %.0f, after them %.0f resources/s", calm, during, later)
	checkRateKept(t, "beside the slow Sources", during, calm)
	checkRateKept(t, "after the slow Sources", later, calm)
}

// sourceApplyRate asks for a pass over the named Source, whose baseline
// has want resources, and returns how many it had in the catalog a
// second, from the request until all want are held. Other Sources' work
// may go on meanwhile: only this Source's resources are counted.
func sourceApplyRate(t *testing.T, n *Node, name string, want int) float64 {
	t.Helper()
	start := time.Now()
	mustSync(t, n, name)
	waitFor(t, 2*time.Minute, "every resource of "+name+" applied", func() bool {
		held, _, err := n.Catalog().CountResources(context.Background(), name)
		return err == nil && held == want
	})
	return float64(want) / time.Since(start).Seconds()
}
