package harvester

import (
	"context"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/sim"
)

// scrape is testutil.Metric on reg.
func scrape(t *testing.T, reg *prometheus.Registry, name string, want map[string]string) (float64, bool) {
	t.Helper()
	return testutil.Metric(t, reg, name, want)
}

// TestEverySourceIsReportedBeforeItsFirstPass: an alert comparing a
// Source's series with 0 or asking for its absence needs the series from
// start-up.
func TestEverySourceIsReportedBeforeItsFirstPass(t *testing.T) {
	e := newEnv(t)
	srv := startSim(t, sim.Config{Resources: 3, Seed: 1})
	_, reg := e.harvester(Defaults(), simSource("a", srv), simSource("b", srv))
	for _, s := range []string{"a", "b"} {
		for _, c := range []struct {
			name   string
			labels map[string]string
		}{
			{"viaduct_harvester_passes_total", map[string]string{"result": "ok"}},
			{"viaduct_harvester_passes_total", map[string]string{"result": "error"}},
			{"viaduct_harvester_changes_total", map[string]string{"op": "created"}},
			{"viaduct_harvester_errors_total", map[string]string{"kind": kindFetch}},
			{"viaduct_harvester_last_success_timestamp_seconds", nil},
			{"viaduct_harvester_last_pass_timestamp_seconds", nil},
			{"viaduct_harvester_cursor_timestamp_seconds", nil},
			{"viaduct_harvester_cursor_lag_seconds", nil},
			{"viaduct_harvester_notifications_received_total", nil},
		} {
			labels := map[string]string{"source": s}
			for k, v := range c.labels {
				labels[k] = v
			}
			v, ok := scrape(t, reg, c.name, labels)
			if !ok || v != 0 {
				t.Errorf("%s%v = %v (present %v), want 0 present before any pass", c.name, labels, v, ok)
			}
		}
	}
}

// TestCursorLagGrowsWhilePassesFail: the lag is worked out at scrape time
// from the cursor, so it keeps growing through failed passes, and the last
// success stays where it was while the last pass moves on.
func TestCursorLagGrowsWhilePassesFail(t *testing.T) {
	e := newEnv(t)
	srv := startSim(t, sim.Config{Resources: 5, Seed: 2})
	h, reg := e.harvester(Defaults(), simSource("s", srv))
	var now time.Time
	h.m.cursors.now = func() time.Time { return now }
	ctx := context.Background()
	if err := h.SyncOnce(ctx, "s"); err != nil {
		t.Fatalf("first pass: %v", err)
	}
	now = time.Now().Add(time.Minute)
	src := map[string]string{"source": "s"}
	cursor, _ := scrape(t, reg, "viaduct_harvester_cursor_timestamp_seconds", src)
	success, _ := scrape(t, reg, "viaduct_harvester_last_success_timestamp_seconds", src)
	lag, _ := scrape(t, reg, "viaduct_harvester_cursor_lag_seconds", src)
	if cursor <= 0 || success <= 0 {
		t.Fatalf("after a successful pass: cursor %v, last success %v; want both set", cursor, success)
	}
	if want := float64(now.UnixNano())/1e9 - cursor; math.Abs(lag-want) > 0.001 {
		t.Fatalf("lag %v, want now - cursor = %v", lag, want)
	}

	if err := srv.SetFault("/*", sim.Fault{Status: http.StatusInternalServerError}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		now = now.Add(time.Hour)
		if err := h.SyncOnce(ctx, "s"); err == nil {
			t.Fatal("pass over a failing Source succeeded")
		}
	}
	lag2, _ := scrape(t, reg, "viaduct_harvester_cursor_lag_seconds", src)
	if lag2 < lag+3*3600 {
		t.Errorf("lag after 3 hours of failed passes is %v, was %v: it must grow", lag2, lag)
	}
	if v, _ := scrape(t, reg, "viaduct_harvester_cursor_timestamp_seconds", src); v != cursor {
		t.Errorf("cursor moved to %v through failed passes, was %v", v, cursor)
	}
	if v, _ := scrape(t, reg, "viaduct_harvester_last_success_timestamp_seconds", src); v != success {
		t.Errorf("last success moved to %v through failed passes, was %v", v, success)
	}
	if v, _ := scrape(t, reg, "viaduct_harvester_passes_total", map[string]string{"source": "s", "result": "error"}); v != 3 {
		t.Errorf("failed passes counted %v, want 3", v)
	}
	if v, _ := scrape(t, reg, "viaduct_harvester_last_pass_timestamp_seconds", src); v < success {
		t.Errorf("last pass %v is before the last success %v", v, success)
	}
}

// TestCursorIsReportedFromStartup: a restarted harvester reports the
// cursor the catalog holds before its first pass, so the lag of a Source
// that fails from the start is not 0.
func TestCursorIsReportedFromStartup(t *testing.T) {
	e := newEnv(t)
	srv := startSim(t, sim.Config{Resources: 5, Seed: 4})
	h, _ := e.harvester(Defaults(), simSource("s", srv))
	if err := h.SyncOnce(context.Background(), "s"); err != nil {
		t.Fatalf("pass: %v", err)
	}
	want := h.m.cursors.get("s")

	sc := simSource("s", srv)
	sc.Schedule = "0 0 1 1 *" // never during the test
	h2, reg := e.harvester(Defaults(), sc)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h2.Run(ctx) }()
	defer func() { cancel(); <-done }()
	eventually(t, 10*time.Second, "cursor reported after start", func() bool {
		v, _ := scrape(t, reg, "viaduct_harvester_cursor_timestamp_seconds", map[string]string{"source": "s"})
		return v == float64(want.UnixNano())/1e9
	})
}
