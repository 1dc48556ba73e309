package node

import (
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/sim"
)

// BenchmarkBaselineDumpVsList times a node's first baseline of a Source
// of 100,000 resources of 1 KiB, from its Resource Dump and from its
// Resource List, until every change is handled and applied, and counts
// the requests the Source answered. Run with -benchtime 1x:
//
//	go test -run '^$' -bench BaselineDumpVsList -benchtime 1x -timeout 30m ./node
func BenchmarkBaselineDumpVsList(b *testing.B) {
	const resources = 100_000
	src := startSource(b, sim.Config{Resources: resources, Seed: 21, MinSize: 1024, MaxSize: 1024, Dumps: true})
	for _, c := range []struct {
		name  string
		dumps bool
	}{{"dump", true}, {"list", false}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var reqs int
			var took time.Duration
			for range b.N {
				b.StopTimer()
				n := startNode(b, testConfig(b.TempDir(), dumpSource("s", src, c.dumps)), nil)
				src.ResetRequests()
				start := time.Now()
				b.StartTimer()
				mustSync(b, n, "s")
				waitFor(b, 30*time.Minute, "the baseline to be applied", func() bool { return settled(b, n) })
				b.StopTimer()
				took += time.Since(start)
				reqs += requests(src)
				b.Logf("%s: requests by path, bitstreams (/res/) summed: %v", c.name, requestsByKind(src))
				n.Close()
			}
			b.ReportMetric(float64(reqs)/float64(b.N), "requests/op")
			b.ReportMetric(float64(resources)*float64(b.N)/took.Seconds(), "entries/s")
			b.ReportMetric(float64(resources)*1024*float64(b.N)/took.Seconds()/1e6, "MB/s")
		})
	}
}

// requestsByKind is the Source's request counts by path, with every
// bitstream's GET counted under "/res/".
func requestsByKind(src *sim.Server) map[string]int {
	out := map[string]int{}
	for p, n := range src.Requests() {
		if strings.HasPrefix(p, "/res/") {
			p = "/res/"
		}
		out[p] += n
	}
	return out
}
