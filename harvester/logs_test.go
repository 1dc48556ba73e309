package harvester

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/sim"
)

// TestFailedPassIsLoggedOnce: one failed pass, one error line.
func TestFailedPassIsLoggedOnce(t *testing.T) {
	e := newEnv(t)
	srv := startSim(t, sim.Config{Resources: 2, Seed: 6})
	if err := srv.SetFault("/*", sim.Fault{Status: http.StatusInternalServerError}); err != nil {
		t.Fatal(err)
	}
	sc := simSource("s", srv)
	sc.Schedule = "@every 1s"
	var logs testutil.Buffer
	h, err := New(Defaults(), []SourceConfig{sc}, Deps{Client: e.client, Upstream: e.ucfg, Cursors: e.cat, Held: e.cat, Publisher: e.pub},
		slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	eventually(t, 15*time.Second, "two failed passes", func() bool { return counter(t, h, "passes", "s", "error") >= 2 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	failed := int(counter(t, h, "passes", "s", "error"))
	if n := strings.Count(logs.String(), "level=ERROR"); n != failed {
		t.Errorf("%d failed passes logged %d error lines, want one each:\n%s", failed, n, logs.String())
	}
}

// TestPassCutByShutdownIsNotAnError: a pass in flight when the node stops
// ends without an ERROR line and is not counted as a failed pass; the log
// says it was stopped.
func TestPassCutByShutdownIsNotAnError(t *testing.T) {
	e := newEnv(t)
	srv := startSim(t, sim.Config{Resources: 2, Seed: 6})
	unanswered := make(chan struct{})
	defer close(unanswered)
	if err := srv.SetFault(sim.PathCapabilities, sim.Fault{Hold: unanswered}); err != nil {
		t.Fatal(err)
	}
	var logs testutil.Buffer
	h, err := New(Defaults(), []SourceConfig{simSource("s", srv)}, Deps{Client: e.client, Upstream: e.ucfg, Cursors: e.cat, Held: e.cat, Publisher: e.pub},
		slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.SyncOnce(ctx, "s") }()
	eventually(t, 15*time.Second, "the pass to ask for the Capability List", func() bool { return srv.Requests()[sim.PathCapabilities] > 0 })
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a pass cut by the shutdown returned no error")
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("a pass cut by the shutdown logged an error:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "pass stopped") {
		t.Errorf("the log does not say the pass was stopped:\n%s", logs.String())
	}
	if n := counter(t, h, "passes", "s", "error"); n != 0 {
		t.Errorf("a pass cut by the shutdown counted as %v failed passes", n)
	}
}
