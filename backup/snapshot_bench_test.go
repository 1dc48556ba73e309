package backup

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/viaduct-mirror/viaduct/catalog"
)

// BenchmarkSnapshot measures the two halves of a snapshot of a catalog
// of 20,000 resources in a directory store: writing it (online copy,
// gzip, upload, read-back) and fetching it (download, gunzip, both
// digests, SQLite's integrity check), the part of a join that replaces
// the replay.
func BenchmarkSnapshot(b *testing.B) {
	f := newFixture(b, 2)
	f.apply(20_000)
	var s Snapshot
	b.Run("write", func(b *testing.B) {
		for range b.N {
			f.apply(1)
			var err error
			if s, err = f.snaps.Write(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(s.CatalogBytes)/float64(s.Size), "compression")
	})
	b.Run("fetch", func(b *testing.B) {
		for range b.N {
			dst := filepath.Join(b.TempDir(), "catalog.db")
			if err := FetchSnapshot(context.Background(), f.store, s, dst); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(s.CatalogBytes)/1e6, "catalog-MB")
	})
	b.Run("integrity-check", func(b *testing.B) {
		dst := filepath.Join(b.TempDir(), "catalog.db")
		if err := FetchSnapshot(context.Background(), f.store, s, dst); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for range b.N {
			if _, err := catalog.CheckCopy(context.Background(), dst); err != nil {
				b.Fatal(err)
			}
		}
	})
}
