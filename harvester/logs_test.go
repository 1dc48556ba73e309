package harvester

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/viaduct-mirror/viaduct/sim"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestFailedPassIsLoggedOnce: one failed pass, one error line.
func TestFailedPassIsLoggedOnce(t *testing.T) {
	e := newEnv(t)
	srv := startSim(t, sim.Config{Resources: 2, Seed: 6})
	if err := srv.SetFault("/*", sim.Fault{Status: http.StatusInternalServerError}); err != nil {
		t.Fatal(err)
	}
	sc := simSource("s", srv)
	sc.Schedule = "@every 1s"
	var logs syncBuffer
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
