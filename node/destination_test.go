package node

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/harvester"
	"github.com/viaduct-mirror/viaduct/sim"
)

// TestDestinationsAgree checks that a Destination reaches the same copy
// from viaduct's Resource List as from its Change Lists replayed on top of
// an earlier Resource List. A harvests a Source; B1 takes a baseline from A
// early and from then on only follows A's Change Lists while the Source
// changes over several periods (some changes reaching B1 one pass at a
// time, some several passes of A at once, some while A is still copying
// them); B2 takes its baseline from A at the end, and B3 in the middle,
// while A is still copying a pass's changes, then follows Change Lists.
// All three must hold the same resources with the same bytes, equal to
// the Source's.
func TestDestinationsAgree(t *testing.T) {
	src := startSource(t, sim.Config{Resources: 150, Seed: 23, MinSize: 16, MaxSize: 768})
	acfg := testConfig(t.TempDir(), sourceConfig("s", src))
	acfg.Republish.ChangeListPeriod = time.Second
	acfg.Republish.MaxEntries = 40
	a := startNode(t, acfg, nil)
	syncSettle(t, a, "s")

	b1 := startNode(t, testConfig(t.TempDir(), changesOnly(nodeSource("a", a))), nil)
	syncSettle(t, b1, "a")
	baselines := resourceListRequests(t, a)
	if baselines == 0 {
		t.Fatalf("B1's first pass did not read A's Resource List")
	}

	var b3 *Node
	for round := range 6 {
		nextPeriod(t, time.Second)
		src.Create(10)
		src.Update(15)
		src.Delete(8)
		src.Mutate(5)
		switch round % 3 {
		case 0:
			syncSettle(t, a, "s")
			syncSettle(t, b1, "a")
		case 1:
			// B1 will read two rounds of A's changes at once.
			syncSettle(t, a, "s")
		case 2:
			// B1 reads A while A's workers are still copying what A's
			// pass queued, so A's lists grow under B1. The first time,
			// the Source answers slowly and B3 takes its baseline from A
			// meanwhile.
			first := b3 == nil
			if first {
				if err := src.SetFault("/res/*", sim.Fault{Delay: 200 * time.Millisecond}); err != nil {
					t.Fatal(err)
				}
			}
			mustSync(t, a, "s")
			if first {
				b3 = startNode(t, testConfig(t.TempDir(), changesOnly(nodeSource("a", a))), nil)
				if settled(t, a) {
					t.Logf("A settled before B3's baseline began: B3 does not see A mid-change")
				}
				reads := resourceListRequests(t, a)
				syncSettle(t, b3, "a")
				baselines += resourceListRequests(t, a) - reads
				src.ClearFaults()
			}
			syncSettle(t, b1, "a")
		}
	}
	waitSettled(t, a, 30*time.Second)
	syncSettle(t, b1, "a")
	syncSettle(t, b3, "a")
	if got := resourceListRequests(t, a); got != baselines {
		t.Fatalf("A's Resource List was read %v times, %v by B1's and B3's baselines: the test needs them to follow Change Lists only after", got, baselines)
	}

	b2 := startNode(t, testConfig(t.TempDir(), nodeSource("a", a)), nil)
	syncSettle(t, b2, "a")

	snap := src.Snapshot()
	fromChanges := heldByOrigin(t, b1, "a", snap)
	fromList := heldByOrigin(t, b2, "a", snap)
	fromMidFlight := heldByOrigin(t, b3, "a", snap)
	for uri, it := range snap {
		c, l, m := fromChanges[uri], fromList[uri], fromMidFlight[uri]
		if c != l || m != l {
			t.Errorf("%s: from Change Lists %+v, from the Resource List %+v, from a baseline taken mid-change %+v", uri, c, l, m)
		}
		want := held{}
		if !it.Deleted {
			want = held{SHA256: it.SHA256, Length: it.Length}
		}
		if l != want {
			t.Errorf("%s: Destinations hold %+v, the Source %+v", uri, l, want)
		}
	}
	for _, n := range []*Node{b1, b2, b3} {
		checkBytes(t, n, "a", src)
	}
}

// changesOnly is sc with no baseline but the first: later passes follow
// Change Lists only.
func changesOnly(sc harvester.SourceConfig) harvester.SourceConfig {
	never := ""
	sc.BaselineSchedule = &never
	return sc
}

// syncSettle runs a pass over the Source and waits until the node has
// handled what it queued.
func syncSettle(t testing.TB, n *Node, source string) {
	t.Helper()
	mustSync(t, n, source)
	waitSettled(t, n, 30*time.Second)
}

// held is what a node holds of one origin resource; the zero value means
// nothing (never held, or deleted).
type held struct {
	SHA256 string
	Length int64
}

// heldByOrigin reads from n's catalog what collection coll holds of each
// URI of the Source's snapshot.
func heldByOrigin(t testing.TB, n *Node, coll string, snap map[string]sim.Item) map[string]held {
	t.Helper()
	out := make(map[string]held, len(snap))
	for uri := range snap {
		r, err := n.Catalog().ResourceByOrigin(context.Background(), coll, uri)
		switch {
		case errors.Is(err, catalog.ErrNotFound):
		case err != nil:
			t.Fatalf("catalog: %v", err)
		case !r.Deleted:
			out[uri] = held{SHA256: r.SHA256, Length: r.Length}
		}
	}
	return out
}

// resourceListRequests is how many times n has served its Resource List
// (a single list or an index) with 200.
func resourceListRequests(t testing.TB, n *Node) float64 {
	t.Helper()
	return servedCount(t, n, "resourcelist") + servedCount(t, n, "resourcelist-index")
}
