package node

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/sim"
)

// BenchmarkClusterIngest measures a baseline of 10,000 resources of 1 KiB
// on a three-server NATS cluster (R3) with one node and with three, into
// one directory the nodes share, from the first pass to every node's
// catalog holding every resource; and, as "single", the same on one node
// with its embedded NATS, keeping every blob as a file as the shared
// directory does. On one machine the nodes and the NATS servers share
// the same cores, so three nodes show what coordination costs, not what
// three machines would gain.
//
// The three run alike (size, Source, store, workers, and the directories
// of the run before just removed) so that the file system weighs on
// each alike: after a removal of as many, the first 10,000 anonymous
// files cost 198 CPU-µs each to create, against 39 on average over
// 100,000 (docs/scale-out.md).
func BenchmarkClusterIngest(b *testing.B) {
	const size = 10_000
	b.Run("single", func(b *testing.B) {
		for range b.N {
			b.StopTimer()
			src := startSource(b, sim.Config{Resources: size, Seed: 51, MinSize: 1024, MaxSize: 1024})
			cfg := testConfig(b.TempDir(), sourceConfig("s", src))
			cfg.Blobs.Dir, cfg.Blobs.Shared = b.TempDir(), true
			cfg.Republish.Notify.Enabled = false
			n := startNode(b, cfg, nil)
			cpu := testutil.CPUTime(b)
			start := time.Now()
			b.StartTimer()
			mustSync(b, n, "s")
			waitFor(b, 10*time.Minute, "the node to copy the baseline", func() bool {
				held, _, err := n.Catalog().CountResources(context.Background(), "s")
				if err != nil {
					b.Fatal(err)
				}
				return held == size && settled(b, n)
			})
			b.StopTimer()
			took := time.Since(start)
			b.ReportMetric(size/took.Seconds(), "resources/s")
			b.ReportMetric(float64((testutil.CPUTime(b)-cpu).Microseconds())/size, "CPU-µs/resource")
			n.Close()
		}
	})
	for _, nodes := range []int{1, 3} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				src := startSource(b, sim.Config{Resources: size, Seed: 51, MinSize: 1024, MaxSize: 1024})
				shared := b.TempDir()
				c := startClusterOf(b, src, nodes, func(cfg *Config) {
					cfg.Blobs.Dir, cfg.Blobs.Shared = shared, true
					cfg.Republish.Notify.Enabled = false
				})
				cpu := testutil.CPUTime(b)
				start := time.Now()
				b.StartTimer()
				c.syncAll(b)
				waitFor(b, 10*time.Minute, "the cluster to copy the baseline", func() bool { return c.settled(b) })
				b.StopTimer()
				took := time.Since(start)
				b.ReportMetric(size/took.Seconds(), "resources/s")
				b.ReportMetric(float64((testutil.CPUTime(b)-cpu).Microseconds())/size, "CPU-µs/resource")
				for _, n := range c.live() {
					n.Close()
				}
			}
		})
	}
}
