package node

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/harvester"
	"github.com/viaduct-mirror/viaduct/notify"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
	"github.com/viaduct-mirror/viaduct/sim"
)

// Nodes sharing an external queue must share their blobs: a node-local
// directory is refused with the reason, a directory declared shared is
// accepted.
func TestExternalQueueNeedsSharedBlobs(t *testing.T) {
	cfg := testConfig(t.TempDir(), harvester.SourceConfig{Name: "s", URL: "https://example.org/", Schedule: "@every 1h"})
	cfg.Queue.URL, cfg.Queue.Replicas = "nats://127.0.0.1:4222", 3
	cfg.Fill()
	err := cfg.Validate()
	if err == nil || !strings.Contains(err.Error(), "blobs.kind: dir with queue.url set") || !strings.Contains(err.Error(), "blobs.shared: true") {
		t.Fatalf("a node-local directory beside an external queue: got %v, want an error saying why and what to set", err)
	}
	cfg.Blobs.Shared = true
	if err := cfg.Validate(); err != nil {
		t.Fatalf("a directory declared shared: %v", err)
	}
}

// A node on an external queue creates its data directory, which only the
// embedded server used to create.
func TestExternalQueueCreatesDataDir(t *testing.T) {
	srv := queuetest.Start(t)
	src := startSource(t, sim.Config{Resources: 1, Seed: 32})
	cfg := testConfig(filepath.Join(t.TempDir(), "not", "yet"), sourceConfig("s", src))
	cfg.Queue.URL, cfg.Queue.Dir = srv.ClientURL(), ""
	cfg.Blobs.Shared = true
	n := startNode(t, cfg, nil)
	if _, err := os.Stat(filepath.Join(cfg.DataDir, "catalog.db")); err != nil {
		t.Fatalf("catalog not created in the new data_dir: %v", err)
	}
	n.Close()
}

// An install from before positions were shared keeps its cursors in the
// catalog: its first pass carries them over and does not harvest the
// Source's baseline again.
func TestCursorsCarriedOverFromTheCatalog(t *testing.T) {
	src := startSource(t, sim.Config{Resources: 200, Seed: 31, MinSize: 16, MaxSize: 64})
	cfg := testConfig(t.TempDir(), sourceConfig("s", src))
	n := startNode(t, cfg, nil)
	mustSync(t, n, "s")
	waitSettled(t, n, 60*time.Second)
	ctx := context.Background()
	pos, err := n.Queue().ReadPosition(ctx, "s")
	if err != nil || pos["changes"] == "" || pos["baseline.completed"] == "" {
		t.Fatalf("position after a baseline: %v, %v", pos, err)
	}
	n.Close()

	// Make the install look as it did before: cursors in the catalog, no
	// position in the bucket.
	cat, err := catalog.Open(ctx, filepath.Join(cfg.DataDir, "catalog.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range pos {
		if err := cat.SetCursor(ctx, "s", name, v); err != nil {
			t.Fatal(err)
		}
	}
	cat.Close()
	qc := cfg.Queue
	qc.Dir = filepath.Join(cfg.DataDir, "jetstream")
	q, err := queue.Open(ctx, qc, nil)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := q.Bucket(ctx, queue.BucketPositions)
	if err != nil {
		t.Fatal(err)
	}
	if err := kv.Purge(ctx, queue.KVKey("s")); err != nil {
		t.Fatal(err)
	}
	q.Close()

	src.ResetRequests()
	n = startNode(t, cfg, nil)
	mustSync(t, n, "s")
	if got := resourceListReads(src); got != 0 {
		t.Fatalf("the Resource List was read %d times after the upgrade: the baseline was harvested again", got)
	}
	after, err := n.Queue().ReadPosition(ctx, "s")
	if err != nil || after["baseline.completed"] != pos["baseline.completed"] {
		t.Fatalf("position after the upgrade: %v (%v), want the catalog's baseline time %s", after, err, pos["baseline.completed"])
	}
}

// resourceListReads counts the requests for the Source's Resource List
// and its Index: how a test sees that a baseline ran.
func resourceListReads(src *sim.Server) int { return requestsUnder(src, "/resourcelist") }

// requestsUnder counts the Source's requests for paths that begin with
// prefix.
func requestsUnder(src *sim.Server, prefix string) int {
	n := 0
	for p, c := range src.Requests() {
		if strings.HasPrefix(p, prefix) {
			n += c
		}
	}
	return n
}

// notifierState reads a value of the notifier's shared state, as the node
// that publishes notifications keeps it.
func notifierState(t testing.TB, n *Node, key string) ([]byte, error) {
	t.Helper()
	kv, err := n.Queue().Bucket(context.Background(), queue.BucketHub)
	if err != nil {
		return nil, err
	}
	return notify.NewSharedState(kv, n.Catalog()).Value(context.Background(), key)
}
