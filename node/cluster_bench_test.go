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
		benchCopy(b, size, func(src *sim.Server) (func(), func() bool, func()) {
			cfg := testConfig(b.TempDir(), sourceConfig("s", src))
			cfg.Blobs.Dir, cfg.Blobs.Shared = b.TempDir(), true
			cfg.Republish.Notify.Enabled = false
			n := startNode(b, cfg, nil)
			done := func() bool {
				held, _, err := n.Catalog().CountResources(context.Background(), "s")
				if err != nil {
					b.Fatal(err)
				}
				return held == size && settled(b, n)
			}
			return func() { mustSync(b, n, "s") }, done, func() { n.Close() }
		})
	})
	for _, nodes := range []int{1, 3} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			benchCopy(b, size, func(src *sim.Server) (func(), func() bool, func()) {
				shared := b.TempDir()
				c := startClusterOf(b, src, nodes, func(cfg *Config) {
					cfg.Blobs.Dir, cfg.Blobs.Shared = shared, true
					cfg.Republish.Notify.Enabled = false
				})
				stop := func() {
					for _, n := range c.live() {
						n.Close()
					}
				}
				return func() { c.syncAll(b) }, func() bool { return c.settled(b) }, stop
			})
		})
	}
}

// benchCopy times b.N baselines of size resources of 1 KiB from a
// simulated Source: start brings up what copies them (untimed) and
// returns how to begin the copy, when it is done and how to stop. It
// reports the rate and the whole process's CPU a resource.
func benchCopy(b *testing.B, size int, start func(*sim.Server) (begin func(), done func() bool, stop func())) {
	for range b.N {
		b.StopTimer()
		src := startSource(b, sim.Config{Resources: size, Seed: 51, MinSize: 1024, MaxSize: 1024})
		begin, done, stop := start(src)
		cpu := testutil.CPUTime(b)
		began := time.Now()
		b.StartTimer()
		begin()
		waitFor(b, 10*time.Minute, "the baseline to be copied", done)
		b.StopTimer()
		took := time.Since(began)
		b.ReportMetric(float64(size)/took.Seconds(), "resources/s")
		b.ReportMetric(float64((testutil.CPUTime(b)-cpu).Microseconds())/float64(size), "CPU-µs/resource")
		stop()
	}
}
