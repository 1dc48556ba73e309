package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/viaduct-mirror/viaduct/harvester"
	"github.com/viaduct-mirror/viaduct/internal/testutil/simtest"
	"github.com/viaduct-mirror/viaduct/node"
	"github.com/viaduct-mirror/viaduct/sim"
)

// TestAdminCommands runs `viaduct admin` against a running node: with
// the token the commands answer, without it the node's refusal is shown.
func TestAdminCommands(t *testing.T) {
	src := simtest.Serve(t, sim.Config{Resources: 4, Seed: 81})
	yes := true
	cfg := node.Defaults()
	cfg.DataDir = t.TempDir()
	cfg.Listen, cfg.Admin.Listen = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Upstream.AllowLoopback = true
	cfg.Harvest.ImmediateFirstPass = false
	cfg.Sources = []harvester.SourceConfig{{Name: "s", URL: src.URL, Schedule: "@every 1h", AllowLoopback: &yes}}
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("tok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.Admin.TokenFile = tokenFile
	cfg.Fill()
	n, err := node.Start(context.Background(), cfg, node.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })

	code, out, errOut := runCLI(t, "admin", "--url", n.AdminURL(), "--token-file", tokenFile, "sync", "s", "--wait")
	if code != 0 || out != "sync of s: done\n" {
		t.Fatalf("admin sync --wait: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, "admin", "--url", n.AdminURL(), "--token-file", tokenFile, "-o", "json", "sources")
	if code != 0 || !strings.Contains(out, `"changes_queued": 4`) {
		t.Fatalf("admin sources: exit %d\n%s", code, out)
	}
	code, out, errOut = runCLI(t, "admin", "--url", n.AdminURL(), "sources")
	if code != 1 || !strings.Contains(errOut, "no admin token") || !strings.Contains(errOut, "401") {
		t.Fatalf("admin without a token: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := runCLI(t, "admin", "--url", n.AdminURL(), "frobnicate"); code != 2 || !strings.Contains(errOut, "unknown command") {
		t.Fatalf("unknown admin command: exit %d %s", code, errOut)
	}
}

func TestServeRefusesStrayArguments(t *testing.T) {
	code, _, errOut := runCLI(t, "serve", "--config", "x.yaml", "extra")
	if code != 2 || !strings.Contains(errOut, `unexpected argument "extra"`) {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		code, out, _ := runCLI(t, args...)
		if code != 0 || out != "viaduct "+version+"\n" {
			t.Errorf("%v: exit %d %q", args, code, out)
		}
	}
}
