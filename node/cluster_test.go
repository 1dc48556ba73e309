package node

import (
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/sim"
)

// TestClusterBaseline: three nodes on a three-server NATS cluster and
// MinIO harvest a Source of 20,000 resources. Each pass, asked of every
// node at once, runs on exactly one; every node ends with the Source's
// catalog and serves the same Change Lists; a subscriber that subscribed
// through the balancer is told of each change once.
func TestClusterBaseline(t *testing.T) {
	src := startSource(t, sim.Config{Resources: 20_000, Seed: 41, MinSize: 8, MaxSize: 48})
	c := startCluster(t, src, "cluster-baseline")
	d := c.subscribe(t)

	failed := c.syncAll(t)
	if got := resourceListReads(src); got != 1 {
		t.Fatalf("one baseline asked of three nodes read the Resource List %d times", got)
	}
	if len(failed) > 0 {
		t.Logf("the baseline pass failed; asking again: %s", failed)
		c.syncAllUntilDone(t, 3*time.Minute)
	}
	c.waitSettled(t, "the cluster to copy the baseline")
	caps := capabilityReads(src)
	src.Update(40)
	src.Create(20)
	src.Delete(10)
	failed = c.syncAll(t)
	if got := capabilityReads(src) - caps; got != 1 {
		t.Fatalf("one pass asked of three nodes read the Capability List %d times", got)
	}
	if len(failed) > 0 {
		t.Logf("the pass failed; asking again: %s", failed)
		c.syncAllUntilDone(t, time.Minute)
	}
	c.waitSettled(t, "the cluster to copy the changes")
	c.checkCluster(t, src, d)
}

// TestClusterNodeKilled kills the node that holds the Source's lease in
// the middle of a baseline: another node takes the lease once it has
// expired and finishes the baseline from the shared position, the
// changes the dead node held are redelivered to the others, and the
// subscriber still gets every change once. The dead node, started again
// on its old data, catches up and serves the same documents.
func TestClusterNodeKilled(t *testing.T) {
	src := startSource(t, sim.Config{Resources: 2000, Seed: 42, MinSize: 8, MaxSize: 48})
	release := holdBitstreamsAfter(t, src, 400)
	c := startCluster(t, src, "cluster-kill")
	d := c.subscribe(t)

	c.syncAll(t)
	h := c.holder(t, sourceLeaseName)
	if h < 0 {
		t.Fatal("no node holds the Source's lease after a pass")
	}
	waitFor(t, time.Minute, "part of the baseline to be applied", func() bool { return lastApplied(t, c.live()[0]) >= 300 })
	if c.settled(t) {
		t.Fatal("the baseline was over before the node was killed")
	}
	c.kill(t, h)
	release()

	waitFor(t, time.Minute, "another node to finish the baseline", func() bool {
		if !c.baselineDone(t) {
			c.syncAll(t)
		}
		return c.baselineDone(t) && c.settled(t)
	})
	c.checkCluster(t, src, d)

	c.start(t, h)
	waitFor(t, time.Minute, "the restarted node to catch up", func() bool { return settledNow(t, c.nodes[h]) })
	other := c.nodes[(h+1)%3]
	explainDiff(t, c.nodes[h], other, src)
	checkMirror(t, c.nodes[h], "s", src)
	_, want := resourceList(t, "http://"+other.ln.Addr().String()+"/s/resourcelist.xml")
	_, got := resourceList(t, "http://"+c.nodes[h].ln.Addr().String()+"/s/resourcelist.xml")
	if len(got) != len(want) || len(got) == 0 {
		t.Fatalf("restarted node lists %d resources, the others %d", len(got), len(want))
	}
	for i := range got {
		if got[i].Loc != want[i].Loc || !got[i].LastMod.Equal(want[i].LastMod) {
			t.Fatalf("restarted node's entry %d is %s %s, the others' %s %s", i, got[i].Loc, got[i].LastMod, want[i].Loc, want[i].LastMod)
		}
	}
}

// TestClusterNATSServerLost stops one of the three NATS servers in the
// middle of a baseline: streams and buckets at three replicas carry on
// with two, the nodes reconnect, and the baseline completes.
func TestClusterNATSServerLost(t *testing.T) {
	src := startSource(t, sim.Config{Resources: 2000, Seed: 43, MinSize: 8, MaxSize: 48})
	release := holdBitstreamsAfter(t, src, 400)
	c := startCluster(t, src, "cluster-nats")
	d := c.subscribe(t)

	c.syncAll(t)
	waitFor(t, time.Minute, "part of the baseline to be applied", func() bool { return lastApplied(t, c.live()[0]) >= 300 })
	c.nats.Stop(0)
	c.natsLost = true
	release()
	waitFor(t, 2*time.Minute, "the baseline to complete on two NATS servers", func() bool {
		if !c.baselineDone(t) {
			c.syncAll(t)
		}
		return c.baselineDone(t) && c.settled(t)
	})
	c.checkCluster(t, src, d)
}
