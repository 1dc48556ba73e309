package node

import (
	"bufio"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/sim"
)

// benchResources is the size of the baseline BenchmarkBaselineIngest
// harvests into the directory store: 100,000 resources of 1 KiB. The
// MinIO run harvests benchResourcesS3, a tenth, since MinIO shares the two
// cores of the reference machine and would take minutes at this size.
const (
	benchResources   = 100_000
	benchResourcesS3 = 10_000
)

// BenchmarkBaselineIngest measures a whole node ingesting a Source's
// baseline: from Start to the catalog holding every resource, through the
// harvester, CHANGES, the fetch workers, the blob store, EVENTS and the
// applier. It reports resources per second, the CPU time the process
// spent and the bytes it wrote to storage per resource, the time the
// harvester took to queue the baseline, and the process's peak resident
// memory (VmHWM, reset before each sub-benchmark where the kernel allows;
// the MinIO server is another process and not counted).
//
//	go test -run '^$' -bench BaselineIngest -benchtime 1x ./node
func BenchmarkBaselineIngest(b *testing.B) {
	b.Run("dir", func(b *testing.B) { benchIngest(b, benchResources, func(*Config) {}) })
	b.Run("minio-10k", func(b *testing.B) {
		benchIngest(b, benchResourcesS3, func(c *Config) { useMinIO(b, c, "bench-"+strconv.FormatInt(time.Now().UnixNano(), 36)) })
	})
}

func benchIngest(b *testing.B, resources int, blobs func(*Config)) {
	src := startSource(b, sim.Config{Resources: resources, Seed: 1, MinSize: 1024, MaxSize: 1024})
	resetPeakRSS()
	b.ReportAllocs()
	b.ResetTimer()
	var total, queueing, cpu time.Duration
	var written int64
	for range b.N {
		cpu0, w0 := testutil.CPUTime(b), testutil.WrittenBytes(b)
		cfg := testConfig(b.TempDir(), sourceConfig("s", src))
		cfg.Fetch.Workers = Defaults().Fetch.Workers // what a node runs with
		blobs(&cfg)
		start := time.Now()
		n := startNode(b, cfg, nil)
		mustSync(b, n, "s")
		queueing += time.Since(start)
		waitFor(b, 30*time.Minute, "every resource to be applied", func() bool {
			held, _, err := n.Catalog().CountResources(context.Background(), "s")
			if err != nil {
				b.Fatal(err)
			}
			return held == resources
		})
		total += time.Since(start)
		cpu += testutil.CPUTime(b) - cpu0
		written += testutil.WrittenBytes(b) - w0
		b.StopTimer()
		if err := n.Close(); err != nil {
			b.Errorf("closing the node: %v", err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(resources*b.N)/total.Seconds(), "resources/s")
	b.ReportMetric(queueing.Seconds()/float64(b.N), "queue-s/op")
	b.ReportMetric(float64(cpu.Microseconds())/float64(resources*b.N), "cpu-µs/resource")
	b.ReportMetric(float64(written)/1024/float64(resources*b.N), "written-KiB/resource")
	b.ReportMetric(float64(peakRSS(b))/(1<<20), "peak-MB")
}

// resetPeakRSS sets VmHWM back to the current RSS, so a sub-benchmark's
// peak is its own (Linux 4.0 and later; elsewhere nothing happens).
func resetPeakRSS() {
	os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// peakRSS is the process's peak resident set size in bytes, from VmHWM.
func peakRSS(b *testing.B) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		b.Logf("no peak RSS: %v", err)
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	b.Logf("no VmHWM in /proc/self/status")
	return 0
}
