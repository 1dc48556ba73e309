package node

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/viaduct-mirror/viaduct/backup"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/sim"
)

// BenchmarkJoinFromSnapshot measures a new node's time to ready (started,
// catalog caught up with EVENTS) on a three-server NATS cluster whose
// EVENTS holds a baseline of 20,000 resources and a tail of changes:
// replaying the whole stream into an empty catalog, against fetching the
// newest snapshot and replaying the tail, once EVENTS has lost the events
// before it.
func BenchmarkJoinFromSnapshot(b *testing.B) {
	const size, tail = 20_000, 500
	ctx := context.Background()
	src := startSource(b, sim.Config{Resources: size, Seed: 53, MinSize: 8, MaxSize: 48})
	shared := b.TempDir()
	c := startClusterOf(b, src, 1, func(cfg *Config) {
		cfg.Blobs.Dir, cfg.Blobs.Shared = shared, true
		cfg.Republish.Notify.Enabled = false
		cfg.Snapshots = backup.Config{Interval: time.Hour, Keep: 2}
	})
	settle := func() {
		c.syncAllUntilDone(b, 5*time.Minute)
		waitFor(b, 10*time.Minute, "the cluster to settle", func() bool { return c.settled(b) })
	}
	settle()
	snap := writeSnapshot(b, c)
	src.Update(tail)
	settle()
	last, err := c.nodes[0].Queue().LastEventSeq(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("EVENTS holds 1-%d; the snapshot is at %d (%d bytes compressed, %d bytes of catalog)", last, snap.Seq, snap.Size, snap.CatalogBytes)

	join := func(b *testing.B, blobs string, from string) {
		var total time.Duration
		for range b.N {
			cfg := c.cfgs[0]
			cfg.DataDir, cfg.Catalog.Path, cfg.Republish.Cache.Dir = b.TempDir(), "", ""
			cfg.Blobs.Dir = blobs
			cfg.Queue.NodeName = "joining"
			cfg.Snapshots.Interval = 0
			cfg.Fill()
			began := time.Now()
			n, err := Start(ctx, cfg, Options{Version: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			waitFor(b, 10*time.Minute, "the joining node to catch up", func() bool { return lastApplied(b, n) >= last })
			total += time.Since(began)
			b.StopTimer()
			if n.joined.From != from {
				b.Fatalf("the node started from %q, want %q", n.joined.From, from)
			}
			n.Close()
			b.StartTimer()
		}
		b.ReportMetric(total.Seconds()/float64(b.N), "s-to-ready")
	}
	// An empty blob directory holds no snapshot: the node replays EVENTS.
	b.Run("replay-whole-stream", func(b *testing.B) { join(b, b.TempDir(), "replay") })
	stream, err := c.nodes[0].Queue().JetStream().Stream(ctx, queue.StreamEvents)
	if err != nil {
		b.Fatal(err)
	}
	if err := stream.Purge(ctx, jetstream.WithPurgeSequence(snap.Seq+1)); err != nil {
		b.Fatal(err)
	}
	b.Run("snapshot-and-tail", func(b *testing.B) { join(b, shared, "snapshot") })
}
