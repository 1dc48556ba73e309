package node

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/sim"
)

// TestDeadLettersComeBackAfterAnOutage: a Source's bitstreams answer 503
// for longer than the queue's retry budget, so every change of its first
// baseline is dead-lettered; then the Source is down altogether
// (connection refused), and a pass fails without touching the dead
// letters; then it recovers. The next scheduled pass, an incremental one
// that reads no Resource List, brings every dead letter back: with no
// re-baseline and nothing asked of the operator, the catalog and the blob
// store hold every resource with its hash, and DEADLETTER is empty.
func TestDeadLettersComeBackAfterAnOutage(t *testing.T) {
	src, err := sim.New(sim.Config{Resources: 30, Seed: 160})
	if err != nil {
		t.Fatal(err)
	}
	srv := listenSim(t, testutil.FixedAddr(t), src)
	setFault(t, srv.Server, "/res/*", sim.Fault{Status: http.StatusServiceUnavailable})
	logs := &logBuffer{}
	n := startNode(t, testConfig(t.TempDir(), sourceConfig("s", srv.Server)), logs.logger())

	mustSync(t, n, "s")
	waitSettled(t, n, 60*time.Second)
	dead := deadLetters(t, n)
	if len(dead) != 30 {
		t.Fatalf("%d dead letters after the outage, want 30", len(dead))
	}
	for _, d := range dead {
		if d.Kind() != "transient" || d.Retries != 0 {
			t.Fatalf("dead letter %d: %s, %d retries; want transient, 0", d.Seq, d.Reason, d.Retries)
		}
	}

	// Down altogether: the pass fails, the dead letters stay as they were.
	addr := strings.TrimPrefix(srv.URL, "http://")
	srv.Close()
	if code, _ := syncSource(t, n, "s"); code == http.StatusOK {
		t.Fatal("a pass over a Source refusing connections succeeded")
	}
	if again := deadLetters(t, n); len(again) != 30 {
		t.Fatalf("%d dead letters after a failed pass, want the 30 untouched", len(again))
	}

	// Recovered, at the same address.
	srv = listenSim(t, addr, src)
	srv.ClearFaults()
	lists := src.Requests()[sim.PathResourceList]
	mustSync(t, n, "s")
	waitSettled(t, n, 60*time.Second)
	if got := src.Requests()[sim.PathResourceList]; got != lists {
		t.Errorf("the recovery pass read the Resource List (%d times): a re-baseline", got-lists)
	}
	if left := deadLetters(t, n); len(left) != 0 {
		t.Fatalf("%d dead letters after the recovery, want none (first: %s)", len(left), left[0].Reason)
	}
	snap := src.Snapshot()
	checkHeld(t, n, "s", snap)
	for uri, it := range snap {
		checkBlob(t, n, uri, it.SHA256)
	}
	if v, _ := metricValue(t, n, "viaduct_harvester_dead_letters_total", map[string]string{"source": "s", "outcome": "requeued"}); v != 30 {
		t.Errorf("requeued: %v, want 30", v)
	}
	lines := logs.records(map[string]string{"msg": "dead letters looked at after a pass that ended well", "source": "s"})
	if len(lines) != 1 || lines[0]["requeued"] != float64(30) {
		t.Errorf("summary lines %v, want one saying 30 were queued again", lines)
	}
	for _, l := range logs.records(map[string]string{"msg": "dead letter queued again"}) {
		if l["level"] != "DEBUG" {
			t.Errorf("a line per dead letter above debug: %v", l)
		}
	}
}

// simAt is a simulated Source served at one address, which a test may
// stop (the Source refuses connections) and serve again at that address.
type simAt struct {
	*sim.Server
	once sync.Once
}

func (s *simAt) Close() { s.once.Do(func() { s.Server.Close() }) }

// listenSim serves src at addr (testutil.FixedAddr, so that nothing else
// takes it while the Source is down) until the test ends or closes it.
func listenSim(t *testing.T, addr string, src *sim.Source) *simAt {
	t.Helper()
	srv, err := sim.Listen(addr, src, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := &simAt{Server: srv}
	t.Cleanup(s.Close)
	return s
}

// checkBlob checks that the blob store holds the bitstream of uri under
// its sha-256, with bytes that hash to it.
func checkBlob(t *testing.T, n *Node, uri, sha string) {
	t.Helper()
	if sha == "" {
		return
	}
	b, err := n.Blobs().Open(context.Background(), sha)
	if err != nil {
		t.Fatalf("%s: blob %s: %v", uri, sha, err)
	}
	defer b.Close()
	h := sha256.New()
	if _, err := io.Copy(h, b); err != nil {
		t.Fatalf("%s: read blob %s: %v", uri, sha, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sha {
		t.Errorf("%s: blob %s holds bytes hashing to %s", uri, sha, got)
	}
}

// TestDeadLettersComeBackOnceInACluster: two nodes share one queue and
// pass over the Source at the same moments, as their schedules would.
// Only the node that holds the Source's lease runs the passes, so every
// dead letter is queued again by one node, once.
func TestDeadLettersComeBackOnceInACluster(t *testing.T) {
	src := startSource(t, sim.Config{Resources: 20, Seed: 162})
	setFault(t, src, "/res/*", sim.Fault{Status: http.StatusServiceUnavailable})
	shared := t.TempDir()
	c := startClusterOf(t, src, 2, func(cfg *Config) {
		cfg.Blobs.Dir, cfg.Blobs.Shared = shared, true
		cfg.Republish.Notify.Enabled = false
	})
	c.syncAll(t)
	waitFor(t, time.Minute, "every change to be dead-lettered", func() bool {
		return c.settled(t) && len(deadLetters(t, c.nodes[0])) == 20
	})
	src.ClearFaults()
	for range 3 {
		c.syncAll(t)
	}
	waitFor(t, time.Minute, "every dead letter to come back and be applied", func() bool {
		return c.settled(t) && len(deadLetters(t, c.nodes[0])) == 0
	})
	var requeued []float64
	for _, n := range c.nodes {
		v, _ := metricValue(t, n, "viaduct_harvester_dead_letters_total", map[string]string{"source": "s", "outcome": "requeued"})
		requeued = append(requeued, v)
		checkHeld(t, n, "s", src.Snapshot())
	}
	if requeued[0]+requeued[1] != 20 || requeued[0]*requeued[1] != 0 {
		t.Errorf("dead letters queued again by each node: %v, want 20 by one node", requeued)
	}
	if h := c.holder(t, sourceLeaseName); h < 0 || requeued[h] != 20 {
		t.Errorf("the lease is held by node %d, the letters were queued again as %v", h, requeued)
	}
}
