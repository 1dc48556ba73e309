package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/harvester"
	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/internal/testutil/simtest"
	"github.com/viaduct-mirror/viaduct/node"
	"github.com/viaduct-mirror/viaduct/sim"
)

// TestHealthcheckReadyAndNot runs `viaduct healthcheck` against a real
// node: exit 0 once it is ready, found by the listen address of its
// configuration file or by --addr; exit 1 once it drains and /readyz
// answers 503.
func TestHealthcheckReadyAndNot(t *testing.T) {
	src := simtest.Serve(t, sim.Config{Resources: 2, Seed: 37})
	yes := true
	cfg := node.Defaults()
	cfg.DataDir = t.TempDir()
	cfg.Listen, cfg.Admin.Listen = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Upstream.AllowLoopback = true
	cfg.Sources = []harvester.SourceConfig{{Name: "s", URL: src.URL, Schedule: "@every 1h", AllowLoopback: &yes}}
	cfg.Fill()
	cfg.Health.ShutdownGrace = 0 // Drain marks the node not ready and returns
	n, err := node.Start(context.Background(), cfg, node.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	addr := strings.TrimPrefix(n.URL(), "http://")
	file := filepath.Join(t.TempDir(), "viaduct.yaml")
	if err := os.WriteFile(file, []byte("listen: "+addr+"\nsources: [this part is not read]\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	var out, errOut string
	testutil.Eventually(t, time.Minute, "healthcheck --config to say ready", func() bool {
		var code int
		code, out, errOut = runCLI(t, "healthcheck", "--config", file)
		return code == 0
	})
	if want := "http://" + addr + "/readyz: ready\n"; out != want {
		t.Errorf("ready: output %q, want %q", out, want)
	}
	if code, _, errOut := runCLI(t, "healthcheck", "--addr", addr); code != 0 {
		t.Errorf("healthcheck --addr %s on a ready node: exit %d: %s", addr, code, errOut)
	}

	n.Drain()
	code, out, errOut := runCLI(t, "healthcheck", "--addr", addr)
	if code != 1 || out != "" || !strings.Contains(errOut, "not ready: 503") {
		t.Errorf("draining node: exit %d, stdout %q, stderr %q; want exit 1 and not ready: 503", code, out, errOut)
	}
}

// TestHealthcheckNothingListening checks that a node that does not
// answer is unhealthy, with the reason.
func TestHealthcheckNothingListening(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	code, _, errOut := runCLI(t, "healthcheck", "--addr", addr)
	if code != 1 || !strings.Contains(errOut, "connection refused") {
		t.Errorf("nothing listening: exit %d, stderr %q; want exit 1 and connection refused", code, errOut)
	}
}

func TestHealthcheckUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"healthcheck", "--help"}, 0, "Usage: viaduct healthcheck"},
		{[]string{"healthcheck"}, 2, "give --config FILE or --addr HOST:PORT"},
		{[]string{"healthcheck", "--addr", "127.0.0.1:1", "--config", "x.yaml"}, 2, "give --config FILE or --addr HOST:PORT"},
		{[]string{"healthcheck", "--addr", "127.0.0.1:1", "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"healthcheck", "--addr", "nohostport"}, 2, "is not host:port"},
		{[]string{"healthcheck", "--config", "no-such-file.yaml"}, 1, "reading config"},
	} {
		code, _, errOut := runCLI(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and %q", c.args, code, errOut, c.code, c.want)
		}
	}
}

func TestProbeAddr(t *testing.T) {
	for in, want := range map[string]string{
		":8080":          "127.0.0.1:8080",
		"0.0.0.0:8080":   "127.0.0.1:8080",
		"[::]:8080":      "[::1]:8080",
		"10.0.0.5:8080":  "10.0.0.5:8080",
		"127.0.0.1:8080": "127.0.0.1:8080",
	} {
		if got, err := probeAddr(in); err != nil || got != want {
			t.Errorf("probeAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
