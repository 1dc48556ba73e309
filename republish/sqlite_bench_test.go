package republish

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/storage/sqlite"
)

// BenchmarkSQLite serves the documents of a 1,000,000-resource collection
// from a real catalog file, built once with ApplyBatch (the resources of
// benchFixture, changed one per millisecond from base) and shared by the
// sub-benchmarks.
func BenchmarkSQLite(b *testing.B) {
	const n = 1_000_000
	f := newSQLiteFixture(b, Config{})
	f.srv.cfg.ChangeListPeriod = 24 * time.Hour
	start := time.Now()
	fillSQLite(b, f.cat, n)
	b.Logf("catalog of %d resources built in %s", n, time.Since(start).Round(time.Millisecond))
	h := f.srv.Handler()

	b.Run("ResourceList", func(b *testing.B) {
		b.ReportAllocs()
		var bytes int64
		for b.Loop() {
			bytes += serveAll(b, h, "/alpha/resourcelist.xml")
		}
		reportServe(b, n, bytes)
	})
	b.Run("ChangeList", func(b *testing.B) {
		path := "/alpha/changelist/" + f.srv.periodStart(base).Format(periodLayout) + ".xml"
		b.ReportAllocs()
		var bytes int64
		for b.Loop() {
			bytes += serve(b, h, path, nil)
		}
		reportServe(b, n, bytes)
	})
}

// fillSQLite applies n creations in batches, as the node's applier does.
func fillSQLite(b *testing.B, cat *sqlite.Catalog, n int) {
	ctx := context.Background()
	length := int64(1234)
	up := viaduct.Change{Source: "origin", Collection: "alpha", Op: "created", Time: base, Modified: base,
		Hash: resourcesync.Hashes{{Alg: "md5", Value: strings.Repeat("0", 32)}}, Length: &length, Type: "text/html"}
	batch := make([]sqlite.Applied, 0, 10000)
	for i := range n {
		ev := &viaduct.Event{Source: "origin", Collection: "alpha", URI: fmt.Sprintf("http://origin.example.com/records/%08d.html", i),
			Op: "created", SHA256: strings.Repeat("ab", 32), MD5: strings.Repeat("cd", 16), Length: 1234, Type: "text/html", Upstream: up}
		ev.Upstream.URI = ev.URI
		batch = append(batch, sqlite.Applied{Seq: uint64(i + 1), At: base.Add(time.Duration(i) * time.Millisecond), Event: ev})
		if len(batch) == cap(batch) || i == n-1 {
			if err := cat.ApplyBatch(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
}

// reportServe reports entries/s, MB/s and the heap in use after a run.
func reportServe(b *testing.B, n int, bytes int64) {
	b.StopTimer()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
	b.ReportMetric(float64(bytes)/1e6/b.Elapsed().Seconds(), "MB/s")
	b.ReportMetric(float64(ms.HeapInuse)/1e6, "heapMB")
}
