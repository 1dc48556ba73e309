package node

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/harvester"
	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/internal/testutil/simtest"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/sim"
)

// waitFor polls cond until it holds, failing the test with what when
// timeout passes first. It is the only way these tests wait.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	testutil.Eventually(t, timeout, what, cond)
}

// stallAfter is how long a node's (or a cluster's) work may show no
// progress before a test says it has stopped. The work itself may take as
// long as the machine's load makes it: tests wait for it to finish, never
// for a figure of speed, which benchmarks measure.
const stallAfter = 90 * time.Second

// waitApplying waits until done holds, for as long as the node's catalog
// keeps applying events.
func waitApplying(t testing.TB, n *Node, what string, done func() bool) {
	t.Helper()
	testutil.WhileProgressing(t, stallAfter, what, func() int64 { return int64(lastApplied(t, n)) }, done)
}

// startSource serves a simulated Source on loopback until the test ends.
func startSource(t testing.TB, cfg sim.Config) *sim.Server {
	t.Helper()
	return simtest.Serve(t, cfg)
}

// sourceConfig is a loopback Source polled only when a test asks.
func sourceConfig(name string, srv *sim.Server) harvester.SourceConfig {
	yes := true
	return harvester.SourceConfig{Name: name, URL: srv.URL, Schedule: "@every 1h", AllowLoopback: &yes}
}

// testConfig is a node on loopback under dataDir whose retries resolve in
// seconds and whose upstream limits do not slow a test down.
func testConfig(dataDir string, sources ...harvester.SourceConfig) Config {
	cfg := Defaults()
	cfg.DataDir = dataDir
	cfg.Listen = "127.0.0.1:0"
	cfg.Admin.Listen = "127.0.0.1:0"
	cfg.Admin.AllowNoTokenOnLoopback = true
	cfg.Log.Level = "debug"
	// Tests ask for each pass themselves.
	cfg.Harvest.ImmediateFirstPass = false
	cfg.Sources = sources

	cfg.Upstream.AllowLoopback = true
	cfg.Upstream.PerHostRate = 1e6
	cfg.Upstream.PerHostBurst = 1e6
	cfg.Upstream.PerHostConcurrency = 32
	cfg.Upstream.MaxAttempts = 2
	cfg.Upstream.BackoffBase = 10 * time.Millisecond
	cfg.Upstream.BackoffMax = 50 * time.Millisecond
	cfg.Upstream.RequestTimeout = time.Minute
	cfg.Upstream.ResponseHeaderTimeout = 2 * time.Second

	cfg.Queue.Backoff = nil
	cfg.Queue.AckWait = 5 * time.Second
	cfg.Queue.MaxDeliver = 3
	cfg.Queue.MaxStore = 1 << 30

	// Every node of a test reaches the others from 127.0.0.1, so a node
	// read by two others (32 connections each, per_host_concurrency)
	// would meet max_conns_per_client (64), which is meant for one client:
	// its connections beyond it were closed, and the reader saw EOF.
	cfg.Public.MaxConnsPerClient = 1024

	cfg.Fetch.Workers = 32
	cfg.Fetch.RetryBase = 50 * time.Millisecond
	cfg.Fetch.RetryMax = 200 * time.Millisecond
	cfg.Fetch.NotFoundAttempts = 2
	cfg.Fetch.InProgressEvery = time.Second
	cfg.Fetch.DrainTimeout = 5 * time.Second

	// The fixity audit reads the blob store beside whatever a test
	// measures; its own tests turn it on (fixity_test.go).
	cfg.Fixity.BytesPerSecond = 0
	// Snapshots are written where a test asks for them (snapshots_test.go),
	// and EVENTS kept whole as it must be without them.
	cfg.Snapshots.Interval = 0
	cfg.Queue.EventsMaxAge = 0
	return cfg
}

// startNode fills in and checks cfg, then starts a node that the test's
// end closes (a test may close it earlier).
func startNode(t testing.TB, cfg Config, log *slog.Logger) *Node {
	t.Helper()
	cfg.Fill()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("config: %v", err)
	}
	n, err := Start(context.Background(), cfg, Options{Logger: log, Version: "test"})
	if err != nil {
		t.Fatalf("starting node: %v", err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

// syncSource asks the node's admin API for a pass over the Source now and
// returns the HTTP status and body once the pass has ended.
func syncSource(t testing.TB, n *Node, name string) (int, string) {
	t.Helper()
	resp, err := http.Post(n.AdminURL()+"/admin/sources/"+url.PathEscape(name)+"/sync?wait=true", "text/plain", nil)
	if err != nil {
		t.Fatalf("sync %s: %v", name, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// mustSync runs a pass over the Source and fails the test if it fails.
func mustSync(t testing.TB, n *Node, name string) {
	t.Helper()
	if code, body := syncSource(t, n, name); code != http.StatusOK {
		t.Fatalf("sync %s: %d %s", name, code, body)
	}
}

// streamMsgs is how many messages a stream holds now.
func streamMsgs(t testing.TB, q *queue.Queue, stream string) uint64 {
	t.Helper()
	return testutil.StreamMsgs(t, q.JetStream(), stream)
}

// settled reports whether the node has nothing left to do: every queued
// change handled (acked or dead-lettered, and so its event published) and
// every event applied to the catalog.
func settled(t testing.TB, n *Node) bool {
	t.Helper()
	if streamMsgs(t, n.Queue(), queue.StreamChanges) != 0 {
		return false
	}
	ok, err := n.CaughtUp(context.Background())
	if err != nil {
		t.Fatalf("caught up: %v", err)
	}
	return ok
}

// settledNow is settled, but a queue that does not answer within 5 s is
// only not settled yet: a JetStream server restarting, or, in a cluster,
// the servers electing a stream's or the meta leader again (a server lost,
// or a loaded machine answering heartbeats late) leave requests
// unanswered for seconds while the nodes carry on by retrying.
func settledNow(t testing.TB, n *Node) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if msgs, err := testutil.ReadStreamMsgs(ctx, n.Queue().JetStream(), queue.StreamChanges); err != nil || msgs != 0 {
		if err != nil {
			t.Log(err)
		}
		return false
	}
	ok, err := n.CaughtUp(ctx)
	if err != nil {
		t.Logf("caught up: %v", err)
	}
	return ok
}

// waitSettled waits until the node has handled everything queued.
func waitSettled(t testing.TB, n *Node, timeout time.Duration) {
	t.Helper()
	waitFor(t, timeout, "the node to handle every queued change", func() bool { return settled(t, n) })
}

// lastApplied is the catalog's position in EVENTS.
func lastApplied(t testing.TB, n *Node) uint64 {
	t.Helper()
	seq, err := n.Catalog().LastApplied(context.Background())
	if err != nil {
		t.Fatalf("last applied: %v", err)
	}
	return seq
}

// deadLetters reads every dead letter.
func deadLetters(t testing.TB, n *Node) []queue.DeadLetter {
	t.Helper()
	dl, err := n.Queue().DeadLetters(context.Background(), 10000)
	if err != nil {
		t.Fatalf("dead letters: %v", err)
	}
	return dl
}

// logBuffer captures a node's JSON log lines, so tests can check what an
// operator is told.
type logBuffer struct{ testutil.Buffer }

// logger is a debug-level JSON logger writing to b.
func (b *logBuffer) logger() *slog.Logger { return b.loggerAt(slog.LevelDebug) }

// loggerAt is a JSON logger writing to b the records at level or above.
func (b *logBuffer) loggerAt(level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: level}))
}

// records returns the captured records whose text attribute of every key
// in match contains the value given for it.
func (b *logBuffer) records(match map[string]string) []map[string]any {
	lines := strings.Split(b.String(), "\n")
	var out []map[string]any
	for _, l := range lines {
		if l == "" {
			continue
		}
		var rec map[string]any
		if json.Unmarshal([]byte(l), &rec) != nil {
			continue
		}
		ok := true
		for k, want := range match {
			got, _ := rec[k].(string)
			if !strings.Contains(got, want) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, rec)
		}
	}
	return out
}
