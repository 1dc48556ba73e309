package harvester

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/sim"
)

// stubProgress stands for the fetch workers: it reports them finishing
// three changes, one failed, more with each question.
type stubProgress struct {
	mu    sync.Mutex
	calls uint64
}

func (s *stubProgress) Progress(string) (uint64, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	return 100 + 3*s.calls, 7 + s.calls
}

// TestBaselineReportsProgress: a baseline under way reports, every few
// seconds (here 20ms), what it listed and queued, what the workers
// finished and failed since it began, their rate and the time left, in a
// log line at info and to OnProgress.
func TestBaselineReportsProgress(t *testing.T) {
	e := newEnv(t)
	srv := startSim(t, sim.Config{Resources: 300, Seed: 9})
	// The list trickles in, so the baseline lasts many intervals.
	if err := srv.SetFault("/resourcelist*", sim.Fault{Trickle: 10 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	var logs testutil.Buffer
	var mu sync.Mutex
	var lines []Progress
	h, err := New(Defaults(), []SourceConfig{simSource("s", srv)}, Deps{
		Client: e.client, Upstream: e.ucfg, Cursors: e.cat, Held: e.cat, Publisher: e.pub,
		Progress: &stubProgress{}, ProgressEvery: 20 * time.Millisecond,
		OnProgress: func(p Progress) { mu.Lock(); lines = append(lines, p); mu.Unlock() },
	}, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo})), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	if err := h.SyncOnce(context.Background(), "s"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lines) < 2 {
		t.Fatalf("%d progress lines during a trickled baseline, want several", len(lines))
	}
	last := lines[len(lines)-1]
	if last.Source != "s" || last.Listed <= 0 || last.Listed > 300 || last.Queued > 300 {
		t.Errorf("last progress %+v: want source s, 0 < listed <= 300, queued <= 300", last)
	}
	if last.Fetched <= 0 || last.Failed <= 0 || last.Rate <= 0 {
		t.Errorf("last progress %+v: want the workers' finished and failed counted from the baseline's start, and a rate", last)
	}
	for i := 1; i < len(lines); i++ {
		if lines[i].Listed < lines[i-1].Listed {
			t.Errorf("listed went back from %d to %d", lines[i-1].Listed, lines[i].Listed)
		}
	}
	out := logs.String()
	for _, key := range []string{"msg=\"baseline progress\"", "level=INFO", "listed=", "queued=", "fetched=", "failed=", "rate=", "eta=", "source=s"} {
		if !strings.Contains(out, key) {
			t.Errorf("progress log lacks %s:\n%s", key, out)
		}
	}
}
