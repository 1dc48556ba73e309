package node

import (
	"fmt"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/sim"
)

// BenchmarkClusterIngest measures a baseline of 10,000 resources of 1 KiB
// on a three-server NATS cluster (R3) with one node and with three, into
// one directory the nodes share, from the first pass to every node's
// catalog holding every resource. On one machine the nodes and the NATS
// servers share the same cores, so three nodes show what coordination
// costs, not what three machines would gain.
func BenchmarkClusterIngest(b *testing.B) {
	const size = 10_000
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
