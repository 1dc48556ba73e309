package node

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/harvester"
	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
	"github.com/viaduct-mirror/viaduct/sim"
)

// balancer fronts the live nodes at one address, round robin, as a load
// balancer before a cluster would: it is every node's public_url.
type balancer struct {
	srv *httptest.Server
	mu  sync.Mutex
	up  map[int]*url.URL
	n   int
}

func startBalancer(t testing.TB) *balancer {
	b := &balancer{up: map[int]*url.URL{}}
	b.srv = httptest.NewServer(b)
	t.Cleanup(b.srv.Close)
	return b
}

func (b *balancer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	var pick *url.URL
	for i := 0; i < 16 && pick == nil; i++ {
		b.n++
		pick = b.up[b.n%16]
	}
	b.mu.Unlock()
	if pick == nil {
		http.Error(w, "no node up", http.StatusBadGateway)
		return
	}
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(pick)
		pr.Out.Host = pr.In.Host
	}}
	rp.ServeHTTP(w, r)
}

func (b *balancer) set(i int, n *Node) {
	u, _ := url.Parse("http://" + n.ln.Addr().String())
	b.mu.Lock()
	b.up[i] = u
	b.mu.Unlock()
}

func (b *balancer) drop(i int) {
	b.mu.Lock()
	delete(b.up, i)
	b.mu.Unlock()
}

// testCluster is three viaduct nodes on a three-server NATS cluster and
// one MinIO bucket, behind a balancer.
type testCluster struct {
	nats  *queuetest.Cluster
	lb    *balancer
	cfgs  []Config
	nodes []*Node
	logs  []*logBuffer
	// natsLost is set once a NATS server of the cluster was stopped:
	// while the others elect new leaders, the acknowledgement of a
	// delivered notification may fail more than once, and each failure
	// has the same payload delivered again.
	natsLost bool
}

// startCluster starts the cluster harvesting src as Source "s".
func startCluster(t testing.TB, src *sim.Server, bucket string) *testCluster {
	t.Helper()
	return startClusterOf(t, src, 3, func(cfg *Config) { useMinIO(t, cfg, bucket) })
}

// startClusterOf starts nodes nodes on a three-server NATS cluster, with
// blobs set by blobs.
func startClusterOf(t testing.TB, src *sim.Server, nodes int, blobs func(*Config)) *testCluster {
	t.Helper()
	c := &testCluster{nats: queuetest.StartCluster(t, 3), lb: startBalancer(t)}
	for i := range nodes {
		cfg := notifyConfig(t.TempDir(), src)
		cfg.PublicURL = c.lb.srv.URL
		cfg.Queue.URL, cfg.Queue.Dir, cfg.Queue.Replicas = c.nats.URL(), "", 3
		cfg.Queue.NodeName = fmt.Sprintf("viaduct-%d", i+1)
		cfg.Queue.LeaseTTL = 2 * time.Second
		blobs(&cfg)
		c.cfgs = append(c.cfgs, cfg)
		c.nodes = append(c.nodes, nil)
		c.logs = append(c.logs, &logBuffer{})
		c.start(t, i)
	}
	t.Cleanup(func() { c.explainFailure(t) })
	return c
}

// explainFailure logs, when the test has failed, what each node warned
// of, and when its notifier started or stopped publishing.
func (c *testCluster) explainFailure(t testing.TB) {
	if !t.Failed() {
		return
	}
	for i, b := range c.logs {
		for _, rec := range b.records(nil) {
			if lvl, _ := rec["level"].(string); lvl != "INFO" || rec["role"] == "notify" {
				t.Logf("%s: %v %v %v", c.cfgs[i].Queue.NodeName, rec["time"], rec["level"], rec)
			}
		}
	}
}

// start starts node i on its data directory, old or new.
func (c *testCluster) start(t testing.TB, i int) {
	t.Helper()
	c.nodes[i] = startNode(t, c.cfgs[i], c.logs[i].loggerAt(slog.LevelInfo))
	c.lb.set(i, c.nodes[i])
}

// live are the nodes running.
func (c *testCluster) live() []*Node {
	var out []*Node
	for _, n := range c.nodes {
		if n != nil {
			out = append(out, n)
		}
	}
	return out
}

// kill stops node i the way a crash does: its NATS connection drops
// without draining (nothing acked, no lease released or renewed), then
// its goroutines are stopped and its catalog closed, so that a later
// start can open it again.
func (c *testCluster) kill(t testing.TB, i int) {
	t.Helper()
	n := c.nodes[i]
	c.lb.drop(i)
	c.nodes[i] = nil
	n.q.Conn().Close()
	n.cancel()
	n.http.Close()
	if n.adminHTTP != nil {
		n.adminHTTP.Close()
	}
	done := make(chan struct{})
	go func() { n.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("a killed node's goroutines did not stop")
	}
	if err := n.cat.Close(); err != nil {
		t.Fatal(err)
	}
}

// subscribe starts a subscriber and subscribes it to "s" through the
// balancer, at whichever node the balancer picks, and waits until every
// live node's hub knows the subscription: from then on, whichever node
// publishes owes it every change.
func (c *testCluster) subscribe(t testing.TB) *downstream {
	t.Helper()
	d := startDownstream(t)
	s := d.subscribe(t, c.lb.srv.URL+"/hub", c.lb.srv.URL+"/s/notifications")
	for _, n := range c.live() {
		waitHubHolds(t, n, s.Callback)
	}
	return d
}

// syncAll asks every live node for a pass over "s" at the same moment, as
// their schedules would, and returns the answers of the passes that
// failed.
func (c *testCluster) syncAll(t testing.TB) []string {
	t.Helper()
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		failed []string
	)
	for _, n := range c.live() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code, body := syncSource(t, n, "s"); code != http.StatusOK {
				mu.Lock()
				failed = append(failed, fmt.Sprintf("%s: %d %s", n.cfg.Queue.NodeName, code, body))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return failed
}

// syncAllUntilDone asks for passes until a round has none failing, as
// the nodes' schedules would: a pass cut short (its node's lease lapsed
// while a loaded machine answered its renewals late) leaves the rest to
// the next one.
func (c *testCluster) syncAllUntilDone(t testing.TB, timeout time.Duration) {
	t.Helper()
	waitFor(t, timeout, "a round of passes with none failing", func() bool {
		failed := c.syncAll(t)
		for _, f := range failed {
			t.Logf("a pass failed; asking again: %s", f)
		}
		return len(failed) == 0
	})
}

// settled: CHANGES is empty and every live node's catalog has caught up.
// A cluster's queue may not answer for a while (settledNow), and that is
// only not settled yet.
func (c *testCluster) settled(t testing.TB) bool {
	for _, n := range c.live() {
		if !settledNow(t, n) {
			return false
		}
	}
	return true
}

// applied is the sum of the live nodes' positions in EVENTS: it moves while
// the cluster copies anything.
func (c *testCluster) applied(t testing.TB) int64 {
	var sum int64
	for _, n := range c.live() {
		sum += int64(lastApplied(t, n))
	}
	return sum
}

// waitSettled waits until the cluster is settled, for as long as its
// catalogs keep moving.
func (c *testCluster) waitSettled(t testing.TB, what string) {
	t.Helper()
	testutil.WhileProgressing(t, stallAfter, what, func() int64 { return c.applied(t) }, func() bool { return c.settled(t) })
}

// holder is the index of the node holding lease name, -1 for none.
func (c *testCluster) holder(t testing.TB, name string) int {
	t.Helper()
	h, err := c.live()[0].Queue().Holders(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	for i, cfg := range c.cfgs {
		if h[name] == cfg.Queue.NodeName {
			return i
		}
	}
	return -1
}

// baselineDone reports whether the shared position records a completed
// baseline of "s". A read that fails is "not yet": while the cluster
// elects new stream leaders after losing a server, reads time out for a
// while, and the callers poll.
func (c *testCluster) baselineDone(t testing.TB) bool {
	pos, err := c.live()[0].Queue().ReadPosition(context.Background(), "s")
	if err != nil {
		t.Logf("reading the shared position: %v", err)
		return false
	}
	return pos["baseline.completed"] != ""
}

// capabilityReads counts the Source's Capability List requests: one per
// pass, whichever node runs it.
func capabilityReads(src *sim.Server) int { return src.Requests()[sim.PathCapabilities] }

// checkCluster checks every live node against the Source and the
// subscriber: each catalog equals the Source, every blob verifies, the
// Change Lists list each change once and the same on every node, and the
// subscriber was told of each exactly once.
func (c *testCluster) checkCluster(t testing.TB, src *sim.Server, d *downstream) {
	t.Helper()
	live := c.live()
	for _, n := range live {
		checkMirror(t, n, "s", src)
		checkChangeLog(t, n, "s")
	}
	checkBlobs(t, live[0])
	var listed []string
	for i, n := range live {
		keys := changeListKeys(t, "http://"+n.ln.Addr().String(), "s")
		if i == 0 {
			listed = keys
			continue
		}
		if fmt.Sprint(keys) != fmt.Sprint(listed) {
			t.Fatalf("node %s lists %d changes, node %s %d, or in another order", n.cfg.Queue.NodeName, len(keys), live[0].cfg.Queue.NodeName, len(listed))
		}
	}
	told := 0
	defer func() {
		if t.Failed() {
			t.Logf("the subscriber was told of %d of the %d changes the Change Lists show", told, len(listed))
		}
	}()
	testutil.WhileProgressing(t, stallAfter, "the subscriber to be told of every change",
		func() int64 { return int64(len(d.notifications())) },
		func() bool {
			told = countEntries(distinct(d.notifications()))
			return told >= len(listed)
		})
	got := d.notifications()
	once := distinct(got)
	if repeats := len(got) - len(once); repeats > 1 && !c.natsLost {
		t.Errorf("%d notifications delivered again; only one, cut by a node's death, may be", repeats)
	} else if repeats > 1 {
		t.Logf("%d notifications delivered again, each identically, while the NATS cluster elected new leaders", repeats)
	} else if repeats == 1 {
		t.Logf("one notification delivered twice, identically: its delivery was cut by the delivering node's death before it was acknowledged")
	}
	checkNotifications(t, once, listed, src.URL)
}

// sourceLeaseName is the lease of Source "s".
const sourceLeaseName = harvester.LeaseSource + "s"

// explainDiff logs, for the first resource whose row differs between two
// nodes' catalogs, every event of it in EVENTS.
func explainDiff(t testing.TB, a, b *Node, src *sim.Server) {
	t.Helper()
	ctx := context.Background()
	for uri := range src.Snapshot() {
		ra, erra := a.Catalog().Resource(ctx, "s", uri)
		rb, errb := b.Catalog().Resource(ctx, "s", uri)
		if (erra == nil) == (errb == nil) && (erra != nil || (ra.MD5 == rb.MD5 && ra.SHA256 == rb.SHA256 && ra.Deleted == rb.Deleted)) {
			continue
		}
		t.Logf("%s: %s has %+v (%v), %s has %+v (%v)", uri, a.cfg.Queue.NodeName, ra, erra, b.cfg.Queue.NodeName, rb, errb)
		last, _ := a.Queue().LastEventSeq(ctx)
		cctx, cancel := context.WithCancel(ctx)
		a.Queue().Events(cctx, 1, func(_ context.Context, seq uint64, _ time.Time, e *viaduct.Event) error {
			if e.URI == uri {
				t.Logf("event %d: %s sha256 %s md5 %q length %d", seq, e.Op, e.SHA256, e.MD5, e.Length)
			}
			if seq >= last {
				cancel()
			}
			return nil
		})
		return
	}
}

// distinct drops a notification that repeats the one before it exactly
// (same interval): what a subscriber sees when the node delivering it died
// between the subscriber's answer and the acknowledgement, and discards by
// its from and until.
func distinct(got []received) []received {
	var out []received
	for _, r := range got {
		if n := len(out); n > 0 && out[n-1].from.Equal(r.from) && out[n-1].until.Equal(r.until) && len(out[n-1].entries) == len(r.entries) {
			continue
		}
		out = append(out, r)
	}
	return out
}
