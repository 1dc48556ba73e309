package queue_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
)

// gauge is the value of the unlabelled gauge name in reg; found is false
// when the registry has no such series.
func gauge(t *testing.T, reg *prometheus.Registry, name string) (float64, bool) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetGauge().GetValue(), true
		}
	}
	return 0, false
}

// TestStreamDepthsAreReportedWhileNATSIsAway: the depths an operator
// alerts on (pending, redelivered, dead letters, the change log's head)
// are read at each scrape, and when NATS goes away they stay, marked
// stale, instead of vanishing.
func TestStreamDepthsAreReportedWhileNATSIsAway(t *testing.T) {
	reg := prometheus.NewRegistry()
	q := queuetest.Start(t, func(c *queue.Config) { c.Registerer = reg })
	ctx := ctxTimeout(t, 30*time.Second)
	for i := range 4 {
		if err := q.PublishChange(ctx, testChange(i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := q.PublishEvent(ctx, testEvent(1)); err != nil {
		t.Fatal(err)
	}
	s, err := q.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dead := next(t, s)
	if err := dead.DeadLetter(ctx, "test: refused", nil); err != nil {
		t.Fatal(err)
	}
	again := next(t, s)
	if err := again.Nak(0); err != nil {
		t.Fatal(err)
	}
	for m := next(t, s); m.Delivered < 2; m = next(t, s) {
	}
	eventually(t, 10*time.Second, "a change delivered twice", func() bool {
		v, _ := gauge(t, reg, "viaduct_queue_changes_redelivered")
		return v >= 1
	})
	s.Release()

	want := map[string]float64{
		"viaduct_queue_connected":           1,
		"viaduct_queue_stats_stale":         0,
		"viaduct_queue_changes_messages":    3,
		"viaduct_queue_deadletter_messages": 1,
		"viaduct_queue_events_last_seq":     1,
	}
	check := func(when string) {
		t.Helper()
		for name, w := range want {
			if v, ok := gauge(t, reg, name); !ok || v != w {
				t.Errorf("%s: %s = %v (present %v), want %v", when, name, v, ok, w)
			}
		}
	}
	check("NATS up")
	updated, _ := gauge(t, reg, "viaduct_queue_stats_updated_timestamp_seconds")
	if updated <= 0 {
		t.Fatalf("stats updated at %v, want a time", updated)
	}
	redelivered, _ := gauge(t, reg, "viaduct_queue_changes_redelivered")

	queue.StopServer(q)
	eventually(t, 10*time.Second, "the connection to notice", func() bool { return !q.Conn().IsConnected() })
	want["viaduct_queue_connected"] = 0
	want["viaduct_queue_stats_stale"] = 1
	want["viaduct_queue_changes_redelivered"] = redelivered
	want["viaduct_queue_stats_updated_timestamp_seconds"] = updated
	check("NATS away")
}
