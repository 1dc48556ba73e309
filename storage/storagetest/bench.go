package storagetest

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/viaduct-mirror/viaduct/storage"
)

// BenchmarkPut measures Create, Write and Commit of new blobs of 1 KiB and
// 1 MiB. Every blob is distinct, so no commit is skipped as a duplicate.
func BenchmarkPut(b *testing.B, s storage.Blobs) {
	for _, size := range []struct {
		name string
		n    int
	}{{"1KiB", 1 << 10}, {"1MiB", 1 << 20}} {
		b.Run(size.name, func(b *testing.B) {
			data := make([]byte, size.n)
			rand.NewChaCha8([32]byte{byte(size.n)}).Read(data)
			// A per-run salt keeps keys distinct from earlier runs on the
			// same store.
			salt := rand.Uint64()
			b.SetBytes(int64(size.n))
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				binary.LittleEndian.PutUint64(data, salt)
				binary.LittleEndian.PutUint64(data[8:], uint64(i))
				Put(b, s, data)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "blobs/s")
		})
	}
}
