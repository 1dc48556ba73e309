package resourcesync

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/internal/testutil"
)

// benchEntries makes n entries like a real list's: a URI, a lastmod, and an
// rs:md with hash, length and type (and change and datetime for a Change
// List).
func benchEntries(n int, change bool) []*Entry {
	base := time.Date(2013, 1, 2, 0, 0, 0, 0, time.UTC)
	es := make([]*Entry, n)
	for i := range es {
		length := int64(1000 + i)
		e := &Entry{
			Loc:     fmt.Sprintf("http://example.com/collection/res%d.pdf", i),
			LastMod: base.Add(time.Duration(i) * time.Second),
			MD: &MD{
				Hash:   Hashes{{MD5, fmt.Sprintf("%032x", i)}},
				Length: &length,
				Type:   "application/pdf",
			},
		}
		if change {
			e.MD.Change = Updated
			e.MD.DateTime = e.LastMod.Add(time.Hour)
		}
		es[i] = e
	}
	return es
}

func benchHeader(change bool) *Header {
	h := &Header{
		MD:    MD{Capability: CapResourceList, At: time.Date(2013, 1, 3, 9, 0, 0, 0, time.UTC)},
		Links: []Link{{Rel: "up", Href: "http://example.com/capabilitylist.xml"}},
	}
	if change {
		h.MD = MD{Capability: CapChangeList, From: time.Date(2013, 1, 2, 0, 0, 0, 0, time.UTC)}
	}
	return h
}

func benchDocument(b *testing.B, n int, change bool) []byte {
	b.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, benchHeader(change))
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range benchEntries(n, change) {
		if err := w.Write(e); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

func benchRead(b *testing.B, n int, change bool) {
	doc := benchDocument(b, n, change)
	b.ReportAllocs()
	b.SetBytes(int64(len(doc)))
	cpu := startCPU(b)
	for b.Loop() {
		r, err := NewReader(bytes.NewReader(doc), Limits{})
		if err != nil {
			b.Fatal(err)
		}
		got := 0
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			got++
		}
		if got != n {
			b.Fatalf("read %d entries, want %d", got, n)
		}
	}
	reportRates(b, n, len(doc), cpu)
}

func benchWrite(b *testing.B, n int, change bool) {
	es := benchEntries(n, change)
	h := benchHeader(change)
	size := len(benchDocument(b, n, change))
	b.ReportAllocs()
	b.SetBytes(int64(size))
	cpu := startCPU(b)
	for b.Loop() {
		w, err := NewWriter(io.Discard, h)
		if err != nil {
			b.Fatal(err)
		}
		for _, e := range es {
			if err := w.Write(e); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	reportRates(b, n, size, cpu)
}

// cpuClock measures the CPU time the process spends (all threads, the
// garbage collector's included) and the bytes it allocates. The machine
// the benchmarks run on is shared, so wall time measures the neighbours
// as much as the code; CPU time measures the code.
type cpuClock struct {
	cpu   time.Duration
	alloc uint64
}

func startCPU(b *testing.B) cpuClock {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return cpuClock{testutil.CPUTime(b), m.TotalAlloc}
}

// reportRates adds the figures the targets are stated in: entries/s and
// MB/s by wall time (MB/s also comes from SetBytes), the same by CPU time,
// and bytes allocated per entry, which must not grow with the list.
func reportRates(b *testing.B, n, size int, c cpuClock) {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	cpu := (testutil.CPUTime(b) - c.cpu).Seconds()
	total := float64(n) * float64(b.N)
	if sec := b.Elapsed().Seconds(); sec > 0 {
		b.ReportMetric(total/sec, "entries/s")
	}
	if cpu > 0 {
		b.ReportMetric(total/cpu, "entries/cpu-s")
		b.ReportMetric(float64(size)*float64(b.N)/cpu/1e6, "MB/cpu-s")
	}
	b.ReportMetric(float64(m.TotalAlloc-c.alloc)/total, "allocB/entry")
}

func BenchmarkReadResourceList50k(b *testing.B) { benchRead(b, 50_000, false) }
func BenchmarkReadChangeList200k(b *testing.B)  { benchRead(b, 200_000, true) }

// The 50,000-entry Change Lists are there to compare with the 200,000-entry
// ones: the same entries, four times as many, the same allocB/entry.
func BenchmarkReadChangeList50k(b *testing.B)    { benchRead(b, 50_000, true) }
func BenchmarkWriteChangeList50k(b *testing.B)   { benchWrite(b, 50_000, true) }
func BenchmarkWriteResourceList50k(b *testing.B) { benchWrite(b, 50_000, false) }
func BenchmarkWriteChangeList200k(b *testing.B)  { benchWrite(b, 200_000, true) }

// BenchmarkReadRawTokenOnly is encoding/xml's RawToken alone over the
// 50,000-entry Resource List: the ceiling for a reader built on it, to
// compare BenchmarkReadResourceList50k with.
func BenchmarkReadRawTokenOnly(b *testing.B) {
	doc := benchDocument(b, 50_000, false)
	b.ReportAllocs()
	b.SetBytes(int64(len(doc)))
	cpu := startCPU(b)
	for b.Loop() {
		d := xml.NewDecoder(bufio.NewReader(bytes.NewReader(doc)))
		for {
			if _, err := d.RawToken(); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
	}
	reportRates(b, 50_000, len(doc), cpu)
}
