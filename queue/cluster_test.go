package queue_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
)

// On a three-server cluster at three replicas, the streams and buckets
// survive one server's loss: a lease taken before is still held, a new
// node still opens, and changes still go into CHANGES.
func TestClusterSurvivesOneServer(t *testing.T) {
	ctx := ctxTimeout(t, 90*time.Second)
	c := queuetest.StartCluster(t, 3)
	cfg := queuetest.Config(t)
	cfg.URL, cfg.Dir, cfg.Replicas, cfg.NodeName = c.URL(), "", 3, "node-a"
	a, err := queue.Open(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	l, err := a.Lease(ctx, "gc")
	if err != nil {
		t.Fatal(err)
	}
	c.Stop(0)
	// A renewal sent while the leases' stream elects a new leader goes
	// unanswered; a node bounds each one by a third of the TTL, and so
	// does this test, to send the next.
	renewed := func() bool {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		return l.Renew(rctx) == nil
	}
	eventually(t, 60*time.Second, "the lease to renew on the two servers left", renewed)
	cfg.NodeName = "node-b"
	b, err := queue.Open(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("a node opens on two servers of three: %v", err)
	}
	defer b.Close()
	if _, err := b.Lease(ctx, "gc"); !errors.Is(err, queue.ErrLeaseHeld) {
		t.Fatalf("b takes a's lease after a server's loss: %v", err)
	}
	eventually(t, 30*time.Second, "a change to be stored", func() bool { return b.PublishChange(ctx, testChange(1)) == nil })
}
