package fetch

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// benchBodies is a Source of n distinct 1 KiB bitstreams at /res/<i>,
// served from memory so that the Source costs as little as HTTP allows.
type benchBodies struct {
	srv    *httptest.Server
	bodies [][]byte
}

func startBodies(b *testing.B, n int) *benchBodies {
	b.Helper()
	s := &benchBodies{bodies: make([][]byte, n)}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range s.bodies {
		body := make([]byte, 1024)
		for j := 0; j < len(body); j += 8 {
			v := rng.Uint64()
			for k := range 8 {
				body[j+k] = byte(v >> (8 * k))
			}
		}
		s.bodies[i] = body
	}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/res/"))
		if err != nil || i < 0 || i >= len(s.bodies) {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", "1024")
		w.Write(s.bodies[i])
	}))
	b.Cleanup(s.srv.Close)
	return s
}

// changes are the "created" changes a baseline of the Source queues: a
// list's at, each entry's lastmod, sha-256, md5, length and type.
func (s *benchBodies) changes() []viaduct.Change {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	out := make([]viaduct.Change, len(s.bodies))
	for i, body := range s.bodies {
		sh, m := sha256.Sum256(body), md5.Sum(body)
		l := int64(len(body))
		out[i] = viaduct.Change{Source: testSource, Collection: testCollection, URI: s.srv.URL + "/res/" + strconv.Itoa(i),
			Op: resourcesync.Created, Time: at.Add(-time.Hour), Modified: at.Add(-time.Hour), Listed: at,
			Hash: resourcesync.Hashes{{Alg: resourcesync.MD5, Value: hex.EncodeToString(m[:])},
				{Alg: resourcesync.SHA256, Value: hex.EncodeToString(sh[:])}},
			Length: &l, Type: "application/octet-stream"}
	}
	return out
}

// BenchmarkBaseline measures what a node's fetch workers spend on a
// baseline's created changes: pull from CHANGES (embedded JetStream), ask
// the catalog (a real one, without the rows, as in a first baseline) and
// the blob store whether the bytes are held, GET 1 KiB over loopback HTTP,
// hash and commit it to a directory store in a temporary directory,
// publish its event on EVENTS, ack. Each iteration drains 10,000 changes
// into a fresh queue, store and catalog. cpu-us/resource is the whole
// process's CPU time (workers, NATS server, HTTP server) per resource;
// user-us and sys-us split it into time in the process and in the kernel,
// since on a shared machine the kernel's part (file system locks, the
// write-back syncfs does for every process) varies most from run to run.
func BenchmarkBaseline(b *testing.B) {
	const n = 10000
	src := startBodies(b, n)
	changes := src.changes()
	for _, workers := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			var elapsed, user, sys time.Duration
			var mallocs, bytes uint64
			for b.Loop() {
				b.StopTimer()
				q := startQueue(b)
				store, _ := dirStore(b)
				cat, err := catalog.Open(context.Background(), filepath.Join(b.TempDir(), "catalog.db"), nil)
				if err != nil {
					b.Fatal(err)
				}
				publishAll(b, q, changes)
				cfg := testConfig()
				cfg.Workers = workers
				deps := queueDeps(b, q, store, clientsForURL(b, src.srv.URL))
				deps.Catalog = cat
				p, err := New(cfg, deps, nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				done := make(chan error, 1)
				runtime.GC()
				var ms0, ms1 runtime.MemStats
				runtime.ReadMemStats(&ms0)
				user0, sys0 := testutil.CPUTimes(b)
				start := time.Now()
				b.StartTimer()
				go func() { done <- p.Run(context.Background()) }()
				eventually(b, 10*time.Minute, "every change handled", func() bool {
					return streamMsgs(b, q, queue.StreamEvents) == uint64(n) && streamMsgs(b, q, queue.StreamChanges) == 0
				})
				b.StopTimer()
				elapsed += time.Since(start)
				user1, sys1 := testutil.CPUTimes(b)
				user, sys = user+user1-user0, sys+sys1-sys0
				runtime.ReadMemStats(&ms1)
				mallocs += ms1.Mallocs - ms0.Mallocs
				bytes += ms1.TotalAlloc - ms0.TotalAlloc
				p.Close()
				if err := <-done; err != nil {
					b.Fatal(err)
				}
				if got := streamMsgs(b, q, queue.StreamEvents); got != n {
					b.Fatalf("%d events, want %d", got, n)
				}
				q.Close()
				cat.Close()
				b.StartTimer()
			}
			total := float64(n * b.N)
			b.ReportMetric(total/elapsed.Seconds(), "resources/s")
			b.ReportMetric(float64(elapsed.Microseconds())/total, "us/resource")
			b.ReportMetric(float64((user+sys).Microseconds())/total, "cpu-us/resource")
			b.ReportMetric(float64(user.Microseconds())/total, "user-us/resource")
			b.ReportMetric(float64(sys.Microseconds())/total, "sys-us/resource")
			b.ReportMetric(float64(mallocs)/total, "allocs/resource")
			b.ReportMetric(float64(bytes)/total, "B/resource")
		})
	}
}
