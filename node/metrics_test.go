package node

import (
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/sim"
)

// metricValue is testutil.Metric on the node's registry.
func metricValue(t *testing.T, n *Node, name string, want map[string]string) (float64, bool) {
	t.Helper()
	return testutil.Metric(t, n.reg, name, want)
}

// TestNodeMetricsNameEverySourceFromStart scrapes a running node: the
// build, every configured Source's series at 0 before its first pass, the
// queue's depths and the catalog's lag; then a pass moves the Source's
// fetch counters, and only its own.
func TestNodeMetricsNameEverySourceFromStart(t *testing.T) {
	a := startSource(t, sim.Config{Resources: 6, Seed: 31})
	b := startSource(t, sim.Config{Resources: 2, Seed: 32})
	n := startNode(t, testConfig(t.TempDir(), sourceConfig("a", a), sourceConfig("b", b)), nil)

	if v, ok := metricValue(t, n, "viaduct_build_info", map[string]string{"version": "test"}); !ok || v != 1 {
		t.Errorf("viaduct_build_info{version=test} = %v (present %v), want 1", v, ok)
	}
	for _, s := range []string{"a", "b"} {
		for _, name := range []string{
			"viaduct_fetch_fetched_total", "viaduct_fetch_bytes_total", "viaduct_fetch_duration_seconds",
			"viaduct_fetch_in_flight", "viaduct_fetch_events_published_total",
			"viaduct_harvester_passes_total", "viaduct_harvester_last_success_timestamp_seconds",
			"viaduct_harvester_cursor_lag_seconds",
		} {
			if v, ok := metricValue(t, n, name, map[string]string{"source": s}); !ok || v != 0 {
				t.Errorf("%s{source=%s} = %v (present %v), want 0 before any pass", name, s, v, ok)
			}
		}
	}
	for _, name := range []string{"viaduct_queue_changes_pending", "viaduct_queue_changes_redelivered",
		"viaduct_queue_deadletter_messages", "viaduct_catalog_lag_events", "viaduct_queue_stats_stale"} {
		if v, ok := metricValue(t, n, name, nil); !ok || v != 0 {
			t.Errorf("%s = %v (present %v), want 0 on an idle node", name, v, ok)
		}
	}

	mustSync(t, n, "a")
	waitSettled(t, n, time.Minute)
	if v, _ := metricValue(t, n, "viaduct_fetch_fetched_total", map[string]string{"source": "a"}); v != 6 {
		t.Errorf("fetched for a: %v, want 6", v)
	}
	if v, _ := metricValue(t, n, "viaduct_fetch_fetched_total", map[string]string{"source": "b"}); v != 0 {
		t.Errorf("fetched for b: %v, want 0 (b was not harvested)", v)
	}
	// Figures read within the last second are reused: wait for a fresh read.
	waitFor(t, 10*time.Second, "viaduct_queue_events_last_seq to reach 6", func() bool {
		v, _ := metricValue(t, n, "viaduct_queue_events_last_seq", nil)
		return v == 6
	})
}
