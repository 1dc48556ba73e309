package fixity

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/storage"
)

// BenchmarkAuditPass measures one unpaced pass of the audit over 20,000
// held copies in the directory store (packed), at 1 KiB and at 64 KiB:
// how fast the audit can read when its budget does not hold it back, and
// what a blob costs in CPU, which sets what a budget costs the node.
func BenchmarkAuditPass(b *testing.B) {
	for _, size := range []int{1 << 10, 64 << 10} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			const n = 20_000
			s := dirStoreB(b)
			cat := openCatalogB(b)
			holdMany(b, s, cat, n, size)
			b.ResetTimer()
			cpu0 := testutil.CPUTime(b)
			start := time.Now()
			for range b.N {
				a, err := New(Config{BytesPerSecond: 1 << 40, BlobsPerSecond: 1 << 40, Every: time.Hour},
					Deps{Catalog: cat, Blobs: s, Quarantine: s, Changes: &queued{}})
				if err != nil {
					b.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() { a.Run(ctx); close(done) }()
				testutil.Eventually(b, 10*time.Minute, "a complete pass", func() bool { return !a.Status().LastPass.IsZero() })
				cancel()
				<-done
				if got := checked(a, resultOK); got != n {
					b.Fatalf("checked %d ok; want %d", got, n)
				}
			}
			wall := time.Since(start).Seconds() / float64(b.N)
			cpu := (testutil.CPUTime(b) - cpu0).Seconds() / float64(b.N)
			b.ReportMetric(n/wall, "blobs/s")
			b.ReportMetric(float64(n*size)/wall/(1<<20), "MiB/s")
			b.ReportMetric(cpu/n*1e6, "cpu-µs/blob")
		})
	}
}

// holdMany stores n blobs of size bytes and records them in one batch of
// the catalog.
func holdMany(b *testing.B, s storage.Blobs, cat *catalog.Catalog, n, size int) {
	ctx := context.Background()
	var batch []catalog.Applied
	for i := range n {
		data := body(i, size)
		w, err := s.Create(ctx, storage.Expect{Size: int64(size)})
		if err != nil {
			b.Fatal(err)
		}
		w.Write(data)
		key, err := w.Commit(ctx)
		if err != nil {
			b.Fatal(err)
		}
		m := md5.Sum(data)
		l := int64(size)
		uri := fmt.Sprintf("http://src.example/%08d", i)
		batch = append(batch, catalog.Applied{Seq: uint64(i + 1), At: time.Now(), Event: &viaduct.Event{
			Source: "s", Collection: "c", URI: uri, Op: resourcesync.Created, SHA256: key, MD5: hex.EncodeToString(m[:]), Length: l,
			Upstream: viaduct.Change{Source: "s", Collection: "c", URI: uri, Op: resourcesync.Created, Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Length: &l}}})
		if len(batch) == 1000 {
			if err := cat.ApplyBatch(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if err := cat.ApplyBatch(ctx, batch); err != nil {
		b.Fatal(err)
	}
}
