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
