package republish

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// BenchmarkSQLite serves the documents of a 1,000,000-resource collection
// from a real catalog file (the resources of benchFixture, changed one per
// millisecond from base), shared by the sub-benchmarks. Building it takes
// about a minute, so it is kept under the system's temporary directory
// and reused by later runs (see benchCatalog).
func BenchmarkSQLite(b *testing.B) {
	const n = 1_000_000
	cat := benchCatalog(b, n)
	f := newFixture(b, Config{})
	srv, err := New(f.srv.cfg, FromSQLite(cat), f.blobs, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	srv.now = f.srv.now
	srv.cfg.ChangeListPeriod = 24 * time.Hour
	h := srv.Handler()

	// ResourceList fetches the whole list (index, then every part) as the
	// first Destination to ask after a change of the catalog does: each
	// fetch follows a new catalog state (an event skipped, which moves the
	// last applied sequence and nothing else), so the index is planned
	// afresh every time.
	b.Run("ResourceList", func(b *testing.B) {
		ctx := context.Background()
		b.ReportAllocs()
		var bytes int64
		cpu := testutil.CPUTime(b)
		for b.Loop() {
			b.StopTimer()
			seq, err := cat.LastApplied(ctx)
			if err == nil {
				err = cat.Skip(ctx, seq+1)
			}
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			bytes += serveAll(b, h, "/alpha/resourcelist.xml")
		}
		reportServe(b, n, bytes, cpu)
	})
	// ResourceListCached fetches it as every later Destination does until
	// the catalog changes again: the index reuses the plan.
	b.Run("ResourceListCached", func(b *testing.B) {
		serveAll(b, h, "/alpha/resourcelist.xml")
		b.ReportAllocs()
		var bytes int64
		cpu := testutil.CPUTime(b)
		for b.Loop() {
			bytes += serveAll(b, h, "/alpha/resourcelist.xml")
		}
		reportServe(b, n, bytes, cpu)
	})
	b.Run("ChangeList", func(b *testing.B) {
		path := "/alpha/changelist/" + srv.periodStart(base).Format(periodLayout) + ".xml"
		b.ReportAllocs()
		var bytes int64
		cpu := testutil.CPUTime(b)
		for b.Loop() {
			bytes += serve(b, h, path, nil)
		}
		reportServe(b, n, bytes, cpu)
	})
}

// benchCatalogVersion names the content fillSQLite writes; change it with
// fillSQLite so that runs do not reuse a stale file.
const benchCatalogVersion = 3

// benchCatalog opens the catalog of n resources that fillSQLite builds,
// kept in os.TempDir()/viaduct-bench between runs. A file that does not
// open (a newer schema) or is incomplete (an interrupted build) is
// rebuilt; an older schema is migrated by Open, as a node's would be.
func benchCatalog(b *testing.B, n int) *catalog.Catalog {
	ctx := context.Background()
	dir := filepath.Join(os.TempDir(), "viaduct-bench")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, fmt.Sprintf("republish-v%d-%d.db", benchCatalogVersion, n))
	start := time.Now()
	if cat, err := catalog.Open(ctx, path, nil); err == nil {
		st, err := cat.CollectionStats(ctx, "alpha")
		if err == nil && st.Resources == int64(n) {
			b.Cleanup(func() { cat.Close() })
			b.Logf("catalog of %d resources opened from %s in %s", n, path, time.Since(start).Round(time.Millisecond))
			return cat
		}
		cat.Close()
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(path + suffix)
	}
	cat, err := catalog.Open(ctx, path, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cat.Close() })
	fillSQLite(b, cat, n)
	b.Logf("catalog of %d resources built in %s at %s", n, time.Since(start).Round(time.Millisecond), path)
	return cat
}

// fillSQLite applies n creations in batches, as the node's applier does.
func fillSQLite(b *testing.B, cat *catalog.Catalog, n int) {
	ctx := context.Background()
	length := int64(1234)
	up := viaduct.Change{Source: "origin", Collection: "alpha", Op: "created", Time: base, Modified: base,
		Hash: resourcesync.Hashes{{Alg: "md5", Value: strings.Repeat("0", 32)}}, Length: &length, Type: "text/html"}
	batch := make([]catalog.Applied, 0, 10000)
	for i := range n {
		ev := &viaduct.Event{Source: "origin", Collection: "alpha", URI: fmt.Sprintf("http://origin.example.com/records/%08d.html", i),
			Op: "created", SHA256: strings.Repeat("ab", 32), MD5: strings.Repeat("cd", 16), Length: 1234, Type: "text/html", Upstream: up}
		ev.Upstream.URI = ev.URI
		batch = append(batch, catalog.Applied{Seq: uint64(i + 1), At: base.Add(time.Duration(i) * time.Millisecond), Event: ev})
		if len(batch) == cap(batch) || i == n-1 {
			if err := cat.ApplyBatch(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
}

// reportServe reports entries/s by wall time, CPU µs per entry (the
// process's CPU time since cpu, see testutil.CPUTime), MB/s and the heap in use
// after a run.
func reportServe(b *testing.B, n int, bytes int64, cpu time.Duration) {
	b.StopTimer()
	used := testutil.CPUTime(b) - cpu
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
	b.ReportMetric(float64(used.Microseconds())/(float64(n)*float64(b.N)), "cpu-µs/entry")
	b.ReportMetric(float64(bytes)/1e6/b.Elapsed().Seconds(), "MB/s")
	b.ReportMetric(float64(ms.HeapInuse)/1e6, "heapMB")
}
