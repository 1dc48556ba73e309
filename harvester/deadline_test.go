package harvester

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/sim"
)

// TestProgressDeadline: with progress_timeout 1.5s and no minimum body
// rate, a Source whose Resource List sends a KiB every 4s has its pass
// ended, failed with ErrNoProgress, its record and metrics saying so,
// well before its list would end (minutes); a Source each of whose
// documents comes after 500ms, its pass longer in all than the deadline
// but never that long without a document ending, completes.
func TestProgressDeadline(t *testing.T) {
	e := slowEnv(t)

	stalled := startSim(t, sim.Config{Resources: 100, Seed: 5})
	if err := stalled.SetFault(sim.PathResourceList, sim.Fault{Trickle: 4 * time.Second}); err != nil {
		t.Fatal(err)
	}
	// Every document of the steady Source, a Resource List Index and
	// four parts among them, is held back 500ms: its pass waits longer
	// than the deadline in all, never as long without a document ending.
	steady := startSim(t, sim.Config{Resources: 40, Seed: 6, PartSize: 10})
	if err := steady.SetFault("/*.xml", sim.Fault{Delay: 500 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	cfg := Defaults()
	cfg.ProgressTimeout = 1500 * time.Millisecond
	h, reg := e.harvester(cfg, simSource("stalled", stalled), simSource("steady", steady))

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	err := h.SyncOnce(ctx, "stalled")
	took := time.Since(start)
	if !errors.Is(err, ErrNoProgress) {
		t.Fatalf("pass over a stalled Source: %v, want ErrNoProgress", err)
	}
	t.Logf("stalled pass ended after %s: %v", took.Round(time.Millisecond), err)
	if took > 30*time.Second {
		t.Errorf("stalled pass took %s to end", took)
	}
	if got, _ := testutil.Metric(t, reg, "viaduct_harvester_passes_total", map[string]string{"source": "stalled", "result": "error"}); got != 1 {
		t.Errorf("failed passes of the stalled Source: %v, want 1", got)
	}
	for _, st := range h.Status(ctx) {
		if st.Name == "stalled" && (st.LastError == nil || !strings.Contains(st.LastError.Error, "progress_timeout")) {
			t.Errorf("status of the stalled Source: last error %+v", st.LastError)
		}
	}

	start = time.Now()
	if err := h.SyncOnce(ctx, "steady"); err != nil {
		t.Fatalf("pass over a steady Source: %v", err)
	}
	took = time.Since(start)
	t.Logf("steady pass took %s", took.Round(time.Millisecond))
	if took < cfg.ProgressTimeout {
		t.Errorf("steady pass took %s, shorter than the deadline it was to outlast", took)
	}
	n := 0
	for _, c := range e.pub.take() {
		if c.Source == "steady" {
			n++
		}
	}
	if n != 40 {
		t.Fatalf("steady Source queued %d changes, want 40", n)
	}
}
