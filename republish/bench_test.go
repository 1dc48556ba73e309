package republish

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// benchFixture holds a catalog of n resources in collection alpha, changed
// one per millisecond from base, and a server on it with 1 h Change Lists.
func benchFixture(b *testing.B, n int) *fixture {
	f := newFixture(b, Config{})
	held := make([]*Record, n)
	log := make([]*Record, n)
	up := viaduct.Change{Source: "origin", Modified: base, Hash: resourcesync.Hashes{{Alg: "md5", Value: strings.Repeat("0", 32)}}, Length: i64(1234), Type: "text/html"}
	for i := range n {
		u := up
		u.URI = fmt.Sprintf("http://origin.example.com/records/%08d.html", i)
		r := &Record{Collection: "alpha", URI: u.URI, Op: "created", Seq: uint64(i + 1), At: base.Add(time.Duration(i) * time.Millisecond),
			SHA256: strings.Repeat("ab", 32), MD5: strings.Repeat("cd", 16), Length: 1234, Type: "text/html", Upstream: u}
		held[i], log[i] = r, r
	}
	f.cat.sorted["alpha"] = held
	f.cat.changes["alpha"] = log
	f.cat.byURI["alpha"] = map[string]*Record{}
	return f
}

// BenchmarkResourceList serves the Resource List Index of a 1,000,000
// resource collection and all its parts, the way a Destination reads it.
func BenchmarkResourceList(b *testing.B) {
	const n = 1_000_000
	f := benchFixture(b, n)
	h := f.srv.Handler()
	b.ReportAllocs()
	b.ResetTimer()
	var bytes int64
	for b.Loop() {
		bytes += serveAll(b, h, "/alpha/resourcelist.xml")
	}
	b.StopTimer()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
	b.ReportMetric(float64(bytes)/1e6/b.Elapsed().Seconds(), "MB/s")
	b.ReportMetric(float64(ms.HeapInuse)/1e6, "heapMB")
}

// BenchmarkChangeList serves the open Change List holding 1,000,000
// changes (all in the current hour).
func BenchmarkChangeList(b *testing.B) {
	const n = 1_000_000
	f := benchFixture(b, n)
	f.srv.cfg.ChangeListPeriod = 24 * time.Hour
	h := f.srv.Handler()
	path := "/alpha/changelist/" + f.srv.periodStart(base).Format(periodLayout) + ".xml"
	b.ReportAllocs()
	b.ResetTimer()
	var bytes int64
	for b.Loop() {
		bytes += serve(b, h, path, nil)
	}
	b.StopTimer()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
	b.ReportMetric(float64(bytes)/1e6/b.Elapsed().Seconds(), "MB/s")
	b.ReportMetric(float64(ms.HeapInuse)/1e6, "heapMB")
}

// serveAll serves an index and every part it lists, returning the bytes.
func serveAll(b *testing.B, h http.Handler, path string) int64 {
	var locs []string
	n := serve(b, h, path, &locs)
	for _, l := range locs {
		n += serve(b, h, strings.TrimPrefix(l, "http://mirror.example.org"), nil)
	}
	return n
}

// serve runs one request in process; with locs it also collects the
// entries' locs (for an index).
func serve(b *testing.B, h http.Handler, path string, locs *[]string) int64 {
	req := httptest.NewRequest(http.MethodGet, path, nil).WithContext(context.Background())
	pr, pw := io.Pipe()
	w := &pipeResponse{h: http.Header{}, w: pw}
	go func() { h.ServeHTTP(w, req); pw.Close() }()
	if locs == nil {
		n, err := io.Copy(io.Discard, pr)
		if err != nil || w.code != 0 && w.code != 200 {
			b.Fatalf("GET %s: %d %v", path, w.code, err)
		}
		return n
	}
	body, _ := io.ReadAll(pr)
	rd, err := resourcesync.NewReader(strings.NewReader(string(body)), resourcesync.DefaultLimits())
	if err != nil {
		b.Fatal(err)
	}
	for {
		e, err := rd.Next()
		if err != nil {
			break
		}
		*locs = append(*locs, e.Loc)
	}
	return int64(len(body))
}

// pipeResponse is a ResponseWriter streaming into a pipe, so that the
// benchmark measures streaming, not buffering a whole document.
type pipeResponse struct {
	h    http.Header
	w    io.Writer
	code int
}

func (p *pipeResponse) Header() http.Header         { return p.h }
func (p *pipeResponse) WriteHeader(code int)        { p.code = code }
func (p *pipeResponse) Write(b []byte) (int, error) { return p.w.Write(b) }

// BenchmarkChangeListIndexGrowing reads the Change List Index of a
// collection whose open period holds 200,000 changes and gains 100
// between reads, as a Destination polling a node in mid-baseline does.
func BenchmarkChangeListIndexGrowing(b *testing.B) {
	f := newFixture(b, Config{ChangeListPeriod: 24 * time.Hour})
	f.logChanges("alpha", base, time.Millisecond, 200_000)
	h := f.srv.Handler()
	serve(b, h, "/alpha/changelist.xml", nil)
	next := base.Add(200_000 * time.Millisecond)
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		f.logChanges("alpha", next, time.Millisecond, 100)
		next = next.Add(100 * time.Millisecond)
		b.StartTimer()
		serve(b, h, "/alpha/changelist.xml", nil)
	}
}
