package main

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/harvester"
	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/internal/testutil/simtest"
	"github.com/viaduct-mirror/viaduct/node"
	"github.com/viaduct-mirror/viaduct/sim"
)

// TestAdminRetriesDeadLettersBySourceAndAll: `viaduct admin retry
// --source NAME` queues again the dead letters of that Source only, and
// `retry --all` those of every Source; each change then reaches the
// catalog once its Source serves it.
func TestAdminRetriesDeadLettersBySourceAndAll(t *testing.T) {
	yes := true
	cfg := node.Defaults()
	cfg.DataDir = t.TempDir()
	cfg.Listen, cfg.Admin.Listen = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Admin.AllowNoTokenOnLoopback = true
	cfg.Upstream.AllowLoopback = true
	cfg.Harvest.ImmediateFirstPass = false
	srcs := map[string]*sim.Server{}
	for i, name := range []string{"a", "b"} {
		src := simtest.Serve(t, sim.Config{Resources: 3, Seed: int64(161 + i)})
		if err := src.SetFault("/res/1", sim.Fault{Status: http.StatusForbidden}); err != nil {
			t.Fatal(err)
		}
		srcs[name] = src
		cfg.Sources = append(cfg.Sources, harvester.SourceConfig{Name: name, URL: src.URL, Schedule: "@every 1h", AllowLoopback: &yes})
	}
	cfg.Fill()
	n, err := node.Start(context.Background(), cfg, node.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	admin := func(args ...string) string {
		t.Helper()
		code, out, errOut := runCLI(t, append([]string{"admin", "--url", n.AdminURL()}, args...)...)
		if code != 0 {
			t.Fatalf("admin %v: exit %d\n%s%s", args, code, out, errOut)
		}
		return out
	}
	dead := func() map[string]uint64 {
		counts, err := n.Queue().DeadLetterCounts(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return counts
	}
	held := func(name string) bool {
		r, err := n.Catalog().Resource(context.Background(), name, srcs[name].URL+"/res/1")
		return err == nil && !r.Deleted
	}

	admin("sync", "a", "--wait")
	admin("sync", "b", "--wait")
	testutil.Eventually(t, time.Minute, "a dead letter of each Source", func() bool {
		d := dead()
		return d["a"] == 1 && d["b"] == 1
	})
	for _, src := range srcs {
		src.ClearFaults()
	}

	if out := admin("retry", "--source", "a"); out != "retried 1 dead letter of Source a\n" {
		t.Fatalf("retry --source a answered %s", out)
	}
	testutil.Eventually(t, time.Minute, "a's change in the catalog", func() bool { return held("a") })
	if d := dead(); d["a"] != 0 || d["b"] != 1 {
		t.Fatalf("dead letters after retrying a: %v, want b's only", d)
	}
	if held("b") {
		t.Fatal("b's change was retried with a's")
	}

	if out := admin("retry", "--all"); out != "retried 1 dead letter of every Source\n" {
		t.Fatalf("retry --all answered %s", out)
	}
	testutil.Eventually(t, time.Minute, "b's change in the catalog and no dead letter left", func() bool {
		d := dead()
		return held("b") && d["a"] == 0 && d["b"] == 0
	})
}
