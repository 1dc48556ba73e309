package harvester

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/viaduct-mirror/viaduct/upstream"
)

// countingHandler counts log records by message, and keeps the
// attributes of the refusal summaries.
type countingHandler struct {
	mu        sync.Mutex
	total     int
	byMsg     map[string]int
	summaries []string
}

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *countingHandler) WithGroup(string) slog.Handler            { return h }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.total++
	h.byMsg[r.Message]++
	if strings.HasPrefix(r.Message, "entries refused") {
		var b strings.Builder
		r.Attrs(func(a slog.Attr) bool { fmt.Fprintf(&b, "%s=%v ", a.Key, a.Value); return true })
		h.summaries = append(h.summaries, b.String())
	}
	return nil
}

func (h *countingHandler) take() (int, map[string]int, []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t, m, s := h.total, h.byMsg, h.summaries
	h.total, h.byMsg, h.summaries = 0, map[string]int{}, nil
	return t, m, s
}

// millionForeignLocs is a Source whose Resource List has one good entry
// and a million entries whose loc is on another host, written as it is
// served; every 100,000 entries it samples the heap in use.
type millionForeignLocs struct {
	n        int // foreign locs listed
	base     string
	served   atomic.Int64
	mu       sync.Mutex
	heapBase uint64
	heapPeak uint64
}

const foreignLocs = 1_000_000

func (s *millionForeignLocs) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	const ns = `xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"`
	w.Header().Set("Content-Type", "application/xml")
	switch r.URL.Path {
	case "/.well-known/resourcesync":
		fmt.Fprintf(w, `<urlset %s><rs:md capability="description"/><url><loc>%s/capabilitylist.xml</loc><rs:md capability="capabilitylist"/></url></urlset>`, ns, s.base)
	case "/capabilitylist.xml":
		fmt.Fprintf(w, `<urlset %s><rs:ln rel="up" href="%s/.well-known/resourcesync"/><rs:md capability="capabilitylist"/><url><loc>%s/resourcelist.xml</loc><rs:md capability="resourcelist"/></url></urlset>`, ns, s.base, s.base)
	case "/resourcelist.xml":
		bw := bufio.NewWriterSize(w, 64<<10)
		fmt.Fprintf(bw, `<urlset %s><rs:md capability="resourcelist" at="2026-01-01T00:00:00Z"/>`+"\n", ns)
		fmt.Fprintf(bw, "<url><loc>%s/r/good</loc><rs:md length=\"4\"/></url>\n", s.base)
		for i := 0; i < s.n; i++ {
			fmt.Fprintf(bw, "<url><loc>http://elsewhere.example/r/%d</loc></url>\n", i)
			if i%100_000 == 0 {
				s.sampleHeap()
			}
		}
		bw.WriteString("</urlset>\n")
		bw.Flush()
		s.served.Add(1)
	default:
		http.NotFound(w, r)
	}
}

func (s *millionForeignLocs) sampleHeap() {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	s.mu.Lock()
	if m.HeapAlloc > s.heapBase {
		s.heapPeak = max(s.heapPeak, m.HeapAlloc-s.heapBase)
	}
	s.mu.Unlock()
}

// TestMillionRefusedLocsLogOnce: a Resource List of a million locs outside
// the Source's authority costs one summary line per pass, whatever the
// number, with the count and a few examples, and the pass's heap stays
// bounded.
func TestMillionRefusedLocsLogOnce(t *testing.T) {
	src := &millionForeignLocs{n: foreignLocs}
	h, logs, e := refusingSource(t, src)

	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	src.heapBase = m.HeapAlloc
	sync1(t, h, "s")
	total, byMsg, sums := logs.take()
	if src.served.Load() != 1 {
		t.Fatalf("the Resource List was served %d times, want 1", src.served.Load())
	}
	if n := counter(t, h, "errors", "s", kindForbiddenLoc); n != foreignLocs {
		t.Errorf("forbidden locs counted %v times, want %d", n, foreignLocs)
	}
	// Progress lines come every few seconds whatever the entries are, so
	// a pass slowed by a loaded machine logs more of them: they are not
	// what the refusals may add, and are not counted.
	if total -= byMsg["baseline progress"]; total > 10 || len(sums) != 1 {
		t.Fatalf("first pass: %d log lines besides progress (%v), %d refusal summaries; want a handful, one summary", total, byMsg, len(sums))
	}
	if !strings.Contains(sums[0], fmt.Sprintf("refused=%d", foreignLocs)) || !strings.Contains(sums[0], "elsewhere.example/r/0") {
		t.Errorf("summary %q should give the count and examples", sums[0])
	}
	if len(sums[0]) > 2000 {
		t.Errorf("summary of %d bytes, want a few examples only", len(sums[0]))
	}
	if got := e.drain(); len(got) != 1 {
		t.Errorf("%d changes queued, want the one good entry", len(got))
	}
	src.mu.Lock()
	peak := src.heapPeak
	src.mu.Unlock()
	if peak > 64<<20 {
		t.Errorf("heap grew by %d bytes during the pass, want it bounded (64 MiB)", peak)
	}
	t.Logf("first pass: %d log lines, heap growth %d bytes, summary %s", total, peak, sums[0])

}

// TestRefusalsSeenAgainNotLogged: the next pass, seeing the same
// refusals, counts them and logs none of them; a new one is logged again,
// as the one new refusal.
func TestRefusalsSeenAgainNotLogged(t *testing.T) {
	src := &millionForeignLocs{n: 1000}
	h, logs, _ := refusingSource(t, src)
	sync1(t, h, "s")
	if _, _, sums := logs.take(); len(sums) != 1 {
		t.Fatalf("first pass: summaries %v, want one", sums)
	}
	sync1(t, h, "s")
	total, byMsg, sums := logs.take()
	if n := counter(t, h, "errors", "s", kindForbiddenLoc); n != 2000 {
		t.Errorf("forbidden locs counted %v times after two passes, want 2000", n)
	}
	if len(sums) != 0 || total > 10 {
		t.Errorf("second pass: %d log lines (%v), summaries %v; want the same refusals not logged again", total, byMsg, sums)
	}
	src.n = 1001
	sync1(t, h, "s")
	_, _, sums = logs.take()
	if len(sums) != 1 || !strings.Contains(sums[0], "refused=1001 new=1 ") || !strings.Contains(sums[0], "/r/1000:") {
		t.Errorf("third pass, one more refusal: summaries %v, want one naming the new one", sums)
	}
}

// refusingSource is a harvester of src, served on loopback, whose log
// records are counted.
func refusingSource(t *testing.T, src *millionForeignLocs) (*Harvester, *countingHandler, *env) {
	e := newEnv(t)
	srv := httptest.NewServer(src)
	t.Cleanup(srv.Close)
	src.base = srv.URL
	// A million entries take longer to read than the usual test timeout.
	ucfg := e.ucfg
	ucfg.RequestTimeout = 5 * time.Minute
	client, err := upstream.New(ucfg, upstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	logs := &countingHandler{byMsg: map[string]int{}}
	cfg := Defaults()
	cfg.MaxEntries = 2 * foreignLocs
	h, err := New(cfg, []SourceConfig{{Name: "s", URL: srv.URL, AllowLoopback: yes()}},
		Deps{Client: client, Upstream: ucfg, Cursors: e.cat, Held: e.cat, Publisher: e.pub}, slog.New(logs), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h, logs, e
}
