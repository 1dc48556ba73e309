package republish

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/storage/dir"
)

// BenchmarkResourceDump builds the Resource Dump of a collection of
// 2,000 bitstreams of 1 KiB into a directory store: catalog read, blob
// reads, hashing, deflate, manifest and commit of the package.
func BenchmarkResourceDump(b *testing.B) {
	const n, size = 2000, 1024
	f := newBenchDumps(b, n, size)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := f.dumps.RebuildResourceDump(ctx, "alpha"); err != nil {
			b.Fatal(err)
		}
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(n*b.N)/sec, "entries/s")
	b.ReportMetric(float64(n*size*b.N)/sec/1e6, "MB/s")
}

// newBenchDumps is a fixture whose collection alpha holds n distinct
// bitstreams of size bytes, each also in a directory store.
func newBenchDumps(b *testing.B, n, size int) *dumpFixture {
	f := &dumpFixture{fixture: newFixture(b, Config{Dumps: DumpConfig{Enabled: true}}), state: &memState{kv: map[string][]byte{}}}
	st, err := dir.New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	f.store = st
	data := make([]byte, size)
	for i := range n {
		copy(data, fmt.Sprintf("resource %08d ", i))
		for j := 16; j < size; j++ {
			data[j] = byte('a' + (i*j)%26)
		}
		at := base.Add(time.Duration(i) * time.Millisecond)
		f.add("alpha", fmt.Sprintf("http://origin.example.com/r/%08d.txt", i), "created", at, string(data), "text/plain", viaduct.Change{Source: "origin"})
		f.putBlob(b, data)
	}
	d, err := NewDumps(context.Background(), f.srv, f.store, f.state, nil)
	if err != nil {
		b.Fatal(err)
	}
	f.dumps = d
	return f
}
