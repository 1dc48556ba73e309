package node

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/public"
	"github.com/viaduct-mirror/viaduct/sim"
)

// TestSlowPeersOnThePublicListener: while a node ingests a Source, 5,000
// idle connections (from 100 client addresses, 50 each), 200 requests
// whose bodies never come and 70 Resource List readers that stop reading
// hold what they can of its public listener (max_conns 1,000). The node
// keeps under max_conns, cuts the slow bodies after read_timeout and the
// stalled readers after write_timeout, answers an honest Destination
// throughout (a list request beyond max_expensive gets 503 with
// Retry-After, which it honours), copies the whole Source and a second
// one while the crowds are there, and a third once they have gone, and
// keeps its WAL under 64 MiB. The apply rates are logged; what share of
// the calm rate the node keeps is measured by BenchmarkSlowPeers.
func TestSlowPeersOnThePublicListener(t *testing.T) {
	calm, during, later := slowPeersPhases(t)
	t.Logf("apply rate: calm %.0f, amid the crowds %.0f, after them %.0f resources/s", calm, during, later)
}

// slowPeersPhases runs TestSlowPeersOnThePublicListener's crowds and
// returns the apply rates of a Source of the same shape copied calm,
// amid the crowds and after them.
func slowPeersPhases(t testing.TB) (calm, during, later float64) {
	const resources = 1500
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && lim.Cur < 12000 && lim.Max >= 12000 {
		lim.Cur = 12000
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
	syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	idle := 5000
	if room := int(lim.Cur) - 2500; room < idle {
		idle = room // the crowd's ends and the node's, within the test's file limit
		t.Logf("file limit %d: %d idle connections", lim.Cur, idle)
	}

	shape := func(seed int64) sim.Config {
		return sim.Config{Resources: resources, Seed: seed, MinSize: 200, MaxSize: 400}
	}
	src := startSource(t, shape(3))
	calmSrc, duringSrc, afterSrc := startSource(t, shape(4)), startSource(t, shape(6)), startSource(t, shape(5))
	cfg := testConfig(t.TempDir(), sourceConfig("s", src), sourceConfig("calm", calmSrc),
		sourceConfig("during", duringSrc), sourceConfig("after", afterSrc))
	cfg.Public.MaxConns = 1000
	cfg.Public.ReadTimeout = 2 * time.Second
	cfg.Public.WriteTimeout = 2 * time.Second
	cfg.Public.IdleTimeout = 5 * time.Second
	cfg.Public.MaxExpensive = 8
	cfg.Public.RetryAfter = time.Second
	n := startNode(t, cfg, nil)
	addr := strings.TrimPrefix(n.URL(), "http://")
	l := n.ln.(*public.Listener)

	// The apply rate of a calm node, for a Source of the same shape.
	calm = sourceApplyRate(t, n, "calm", resources)

	// A first pass, so that there is a list to stall on.
	mustSync(t, n, "s")
	waitApplying(t, n, "the first resources to be applied", func() bool {
		held, _, err := n.Catalog().CountResources(context.Background(), "s")
		return err == nil && held > 0
	})

	var mu sync.Mutex
	var crowd []net.Conn
	keep := func(c net.Conn) { mu.Lock(); crowd = append(crowd, c); mu.Unlock() }
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range crowd {
			c.Close()
		}
	})
	var wg sync.WaitGroup
	// 5,000 idle connections.
	for a := range 100 {
		wg.Go(func() {
			for range idle / 100 {
				if c, err := testutil.DialFrom(fmt.Sprintf("127.0.1.%d", a+1), addr, 0); err == nil {
					keep(c)
				}
			}
		})
	}
	// 200 request bodies that never come.
	slow := make(chan net.Conn, 200)
	for a := range 50 {
		wg.Go(func() {
			for range 4 {
				c, err := testutil.DialFrom(fmt.Sprintf("127.0.2.%d", a+1), addr, 0)
				if err != nil {
					continue
				}
				fmt.Fprintf(c, "POST /hub HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\nhub.mode=", addr)
				keep(c)
				slow <- c
			}
		})
	}
	// 70 Resource List readers that read the status line and stop.
	for a := range 70 {
		wg.Go(func() {
			c, err := testutil.DialFrom(fmt.Sprintf("127.0.3.%d", a+1), addr, 2048)
			if err != nil {
				return
			}
			keep(c)
			fmt.Fprintf(c, "GET /s/resourcelist.xml HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
			bufio.NewReader(c).ReadString('\n')
		})
	}
	// The rest of the ingest, while the crowds arrive, and the apply rate
	// of a Source like the calm one, measured the same way.
	wg.Go(func() { mustSync(t, n, "s") })
	during = sourceApplyRate(t, n, "during", resources)

	// An honest Destination, throughout.
	honest := &http.Client{Timeout: 30 * time.Second}
	get := func(path string) (int, string) {
		for {
			resp, err := honest.Get(n.URL() + path)
			if err != nil {
				t.Fatalf("honest GET %s: %v", path, err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "" {
				<-time.After(time.Second) // the Retry-After the node asked for
				continue
			}
			return resp.StatusCode, string(b)
		}
	}
	for range 5 {
		if code, _ := get("/.well-known/resourcesync"); code != http.StatusOK {
			t.Fatalf("Source Description: %d", code)
		}
		if code, body := get("/s/resourcelist.xml"); code != http.StatusOK || !strings.Contains(body, "<urlset") && !strings.Contains(body, "<sitemapindex") {
			t.Fatalf("Resource List: %d %.200s", code, body)
		}
	}
	wg.Wait()
	close(slow)
	if open := l.Open(); open > cfg.Public.MaxConns {
		t.Errorf("%d connections open, above max_conns %d", open, cfg.Public.MaxConns)
	}

	waitApplying(t, n, "every resource applied beside the crowds", func() bool {
		held, _, err := n.Catalog().CountResources(context.Background(), "s")
		return err == nil && held == resources
	})
	// The slow bodies were cut off after read_timeout.
	for c := range slow {
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		if _, err := io.ReadAll(c); err != nil && strings.Contains(err.Error(), "timeout") {
			t.Fatalf("a request whose body never came still holds its connection after 30s")
		}
	}
	// The stalled readers were cut off after write_timeout: no list is
	// being served once they are alone.
	waitFor(t, 30*time.Second, "the stalled list readers to be cut off", func() bool {
		return gauge(t, n, "viaduct_public_expensive_in_flight") == 0
	})
	if info, err := os.Stat(n.Catalog().Path() + "-wal"); err == nil && info.Size() > 64<<20 {
		t.Errorf("catalog WAL is %d bytes, want under 64 MiB", info.Size())
	}
	t.Logf("evicted %v idle connections, refused %v list requests with 503",
		gauge(t, n, "viaduct_public_conns_evicted_total"), gauge(t, n, "viaduct_public_expensive_refused_total"))

	// The crowds go away; the node is at once as fast as before them.
	mu.Lock()
	for _, c := range crowd {
		c.Close()
	}
	crowd = nil
	mu.Unlock()
	later = sourceApplyRate(t, n, "after", resources)
	return calm, during, later
}

// gauge reads one unlabelled metric of the node's registry.
func gauge(t testing.TB, n *Node, name string) float64 {
	t.Helper()
	mfs, err := n.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name || len(mf.GetMetric()) == 0 {
			continue
		}
		m := mf.GetMetric()[0]
		if m.GetGauge() != nil {
			return m.GetGauge().GetValue()
		}
		return m.GetCounter().GetValue()
	}
	return 0
}
