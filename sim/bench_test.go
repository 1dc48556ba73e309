package sim

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
)

// discard is a ResponseWriter that counts and drops the body, so that the
// benchmark measures the Source and not a buffer.
type discard struct {
	h      http.Header
	n      int64
	status int
}

func (d *discard) Header() http.Header  { return d.h }
func (d *discard) WriteHeader(code int) { d.status = code }
func (d *discard) Write(p []byte) (int, error) {
	d.n += int64(len(p))
	return len(p), nil
}

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// bigSource builds a Source of n resources of 1 KiB and reports the heap it
// holds per resource.
func bigSource(b *testing.B, n int) *Source {
	b.Helper()
	before := heapInUse()
	src, err := New(Config{Resources: n, MinSize: 1024, MaxSize: 1024, BaseURL: "http://sim.example"})
	if err != nil {
		b.Fatal(err)
	}
	after := heapInUse()
	b.Cleanup(func() { b.ReportMetric(float64(after-before)/float64(n), "heap-B/resource") })
	return src
}

// BenchmarkResourceList serves the whole Resource List (Index and both parts) of
// a 100,000-resource Source.
func BenchmarkResourceList(b *testing.B) {
	const n = 100_000
	src := bigSource(b, n)
	h := src.Handler()
	paths := []string{PathResourceList, "/resourcelist-1.xml", "/resourcelist-2.xml"}
	var bytes int64
	b.ReportAllocs()
	for b.Loop() {
		bytes = 0
		for _, p := range paths {
			w := &discard{h: http.Header{}, status: http.StatusOK}
			h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, p, nil))
			if w.status != http.StatusOK {
				b.Fatalf("%s: status %d", p, w.status)
			}
			bytes += w.n
		}
	}
	b.SetBytes(bytes)
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
}

// BenchmarkNew builds a 100,000-resource Source of 1 KiB bitstreams,
// hashing every one.
func BenchmarkNew(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		bigSource(b, 100_000)
	}
	b.SetBytes(100_000 * 1024)
}

// BenchmarkBitstream serves one 64 KiB bitstream.
func BenchmarkBitstream(b *testing.B) {
	src, err := New(Config{Resources: 1, MinSize: 64 << 10, MaxSize: 64 << 10, BaseURL: "http://sim.example"})
	if err != nil {
		b.Fatal(err)
	}
	h := src.Handler()
	b.ReportAllocs()
	b.SetBytes(64 << 10)
	for b.Loop() {
		w := &discard{h: http.Header{}}
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/res/1", nil))
	}
}
