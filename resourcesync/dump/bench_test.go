package dump

import (
	"bytes"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// BenchmarkReadPackage opens and reads a package
// of 10,000 bitstreams of 1 KiB each, verifying every one: the cost of a
// baseline from a Resource Dump, per package.
func BenchmarkReadPackage(b *testing.B) {
	const n, size = 10_000, 1 << 10
	h := &resourcesync.Header{MD: resourcesync.MD{Capability: resourcesync.CapResourceDumpManifest, At: time.Now()}}
	var zbuf bytes.Buffer
	w, err := NewWriter(&zbuf, h, Config{TempDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	data := make([]byte, size)
	for i := range n {
		for j := range data {
			data[j] = byte(i*7 + j*j) // varied, somewhat compressible
		}
		l := int64(size)
		e := &resourcesync.Entry{Loc: fmt.Sprintf("http://example.com/r/%06d", i), MD: &resourcesync.MD{Length: &l, Type: "text/plain"}}
		if err := w.Add(b.Context(), e, bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	path := writeFile(b, zbuf.Bytes())
	buf := make([]byte, 32<<10)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := testutil.CPUTime(b)
	for range b.N {
		p, err := Open(path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		err = p.Entries(b.Context(), func(e *resourcesync.Entry, body *Body) error {
			if _, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{body}, buf); err != nil {
				return err
			}
			_, err := body.Verify()
			return err
		})
		p.Close()
		if err != nil {
			b.Fatal(err)
		}
	}
	if cpu := (testutil.CPUTime(b) - cpu0).Seconds(); cpu > 0 {
		b.ReportMetric(float64(n*b.N)/cpu, "entries/cpu-s")
		b.ReportMetric(float64(n*size*b.N)/cpu/1e6, "MB/cpu-s")
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(n*b.N)/sec, "entries/s")
	b.ReportMetric(float64(n*size*b.N)/sec/1e6, "MB/s")
}
