package node

import (
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/sim"
)

// TestDumpRoundTripNodes has node B take its baseline from node A's
// Resource Dump and catch up from A's Change Dump, and node C harvest A by
// its Resource List and Change Lists; both end holding exactly what A
// holds, which is the Source.
func TestDumpRoundTripNodes(t *testing.T) {
	src := startSource(t, sim.Config{Resources: 300, Seed: 13, MinSize: 16, MaxSize: 2048})
	acfg := testConfig(t.TempDir(), sourceConfig("s", src))
	dumpConfig(&acfg)
	a := startNode(t, acfg, nil)
	syncSettle(t, a, "s")
	rebuildDumps(t, a, "s")

	bcfg := testConfig(t.TempDir(), nodeSource("a", a))
	bcfg.Harvest.PreferDumps = true
	b := startNode(t, bcfg, nil)
	syncSettle(t, b, "a")
	if n := servedCount(t, a, "dump-file"); n == 0 {
		t.Fatal("B's baseline did not download A's Resource Dump")
	}
	if n := servedCount(t, a, "bitstream"); n != 0 {
		t.Fatalf("B fetched %v bitstreams one by one instead of from the Resource Dump", n)
	}
	packages := servedCount(t, a, "dump-file")

	src.Create(40)
	src.Update(60)
	src.Delete(30)
	src.Mutate(10)
	syncSettle(t, a, "s")
	// One more change, in a later period, closes the period of the last.
	last := lastChange(t, a, "s")
	waitFor(t, 5*time.Second, "the next Change List period", func() bool { return time.Now().After(last.Truncate(time.Second).Add(time.Second)) })
	src.Create(1)
	syncSettle(t, a, "s")
	rebuildDumps(t, a, "s")
	syncSettle(t, b, "a")
	if servedCount(t, a, "dump-file") == packages {
		t.Fatal("B did not catch up from A's Change Dump")
	}
	if n := servedCount(t, a, "bitstream"); n > 1 {
		t.Errorf("B fetched %v bitstreams one by one; only the open period's one change should need it", n)
	}

	ccfg := testConfig(t.TempDir(), nodeSource("a", a))
	ccfg.Harvest.PreferDumps = false
	c := startNode(t, ccfg, nil)
	syncSettle(t, c, "a")

	snap := src.Snapshot()
	checkMirror(t, a, "s", src)
	want := heldByOrigin(t, a, "s", snap)
	for name, got := range map[string]map[string]held{"B (Dumps)": heldByOrigin(t, b, "a", snap), "C (lists)": heldByOrigin(t, c, "a", snap)} {
		if len(got) != len(want) {
			t.Errorf("%s holds %d resources, A %d", name, len(got), len(want))
		}
		for uri, h := range want {
			if got[uri] != h {
				t.Errorf("%s holds %s as %+v, A as %+v", name, uri, got[uri], h)
			}
		}
	}
	for _, n := range []*Node{b, c} {
		if dl := deadLetters(t, n); len(dl) != 0 {
			t.Fatalf("%d dead letters, first: %s %v", len(dl), dl[0].Reason, dl[0].Evidence)
		}
	}
}

// servedCount is how many times n answered 200 for documents labelled
// doc in its metrics.
func servedCount(t testing.TB, n *Node, doc string) float64 {
	t.Helper()
	mfs, err := n.reg.Gather()
	if err != nil {
		t.Fatalf("gathering metrics: %v", err)
	}
	total := 0.0
	for _, mf := range mfs {
		if mf.GetName() != "viaduct_republish_requests_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["doc"] == doc && labels["code"] == "200" {
				total += m.GetCounter().GetValue()
			}
		}
	}
	return total
}
