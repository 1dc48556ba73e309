package node

import (
	"context"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/harvester"
	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
	"github.com/viaduct-mirror/viaduct/sim"
)

// TestRestartWithinLeaseTTLIsQuiet: a node that comes back before its
// previous run's lease ran out (a crash, a quick restart) finds its own
// name's lease held. That is a normal restart: it says so at INFO, logs
// no WARN or ERROR about it, and announces itself once the old lease is
// gone.
func TestRestartWithinLeaseTTLIsQuiet(t *testing.T) {
	// The previous run: its lease is still in the bucket under the name.
	prev := queuetest.Start(t, func(c *queue.Config) { c.NodeName = "n1"; c.LeaseTTL = time.Second })
	old, err := prev.Lease(context.Background(), harvester.LeaseNode+"n1")
	if err != nil {
		t.Fatal(err)
	}

	var logs logBuffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("log:\n%s", logs.String())
		}
	})
	src := startSource(t, sim.Config{Resources: 2, Seed: 91})
	s := sourceConfig("s", src)
	s.Schedule = "@every 1s"
	cfg := testConfig(t.TempDir(), s)
	cfg.Queue.URL, cfg.Queue.Dir, cfg.Queue.NodeName, cfg.Queue.LeaseTTL = prev.ClientURL(), "", "n1", time.Second
	cfg.Blobs.Shared = true
	cfg.Queue.AckWait = queuetest.Config(t).AckWait // as the queue was made
	n := startNode(t, cfg, logs.logger())

	if len(logs.records(map[string]string{"level": "INFO", "msg": "still leased by its previous run"})) != 1 {
		t.Errorf("no INFO line saying the previous run's lease is still held")
	}
	if err := old.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the node to announce itself again", func() bool {
		holders, err := n.Queue().Holders(context.Background(), harvester.LeaseNode)
		return err == nil && holders[harvester.LeaseNode+"n1"] == "n1" && len(logs.records(map[string]string{"msg": "this node is announced again"})) == 1
	})
	for _, level := range []string{"WARN", "ERROR"} {
		for _, rec := range logs.records(map[string]string{"level": level}) {
			t.Errorf("%s on a restart: %v", level, rec)
		}
	}
}

// TestNotificationBeforeFirstPassAfterRestart: the Source's hub keeps
// notifying a node across its restart. A notification that comes before
// the restarted node's first pass is taken (the node takes the Source's
// free lease for it), not refused with an ERROR about a lease this node
// does not hold.
func TestNotificationBeforeFirstPassAfterRestart(t *testing.T) {
	src, hub := startPushSource(t, sim.Config{Resources: 3, Seed: 93})
	cfg := pushConfig(t, src, 0)
	cfg.Listen = testutil.FixedAddr(t) // the hub's callback must reach the node again
	var logs logBuffer
	n := startNode(t, cfg, logs.logger())
	subscribed(t, n, src, hub, &logs)
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}

	var again logBuffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("log after the restart:\n%s", again.String())
		}
	})
	n = startNode(t, cfg, again.logger())
	src.Update(1)
	waitFor(t, 30*time.Second, "the change notified after the restart", func() bool { return mirrors(t, n, "s", src) })
	for _, level := range []string{"WARN", "ERROR"} {
		for _, rec := range again.records(map[string]string{"level": level}) {
			t.Errorf("%s after a restart: %v", level, rec)
		}
	}
}
