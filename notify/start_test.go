package notify

import (
	"context"
	"log/slog"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/viaduct-mirror/viaduct/queue/queuetest"
	"github.com/viaduct-mirror/viaduct/republish"
)

// TestMetricsGatheredWhileStarting: the node gathers its registry (for
// /metrics and its status page's rates) from the moment notification
// metrics are registered, which is before the hub they count is built.
// Gathered over and over while Start runs, the subscriber gauge reads 0
// until the hub runs; it once dereferenced the hub not yet built, and the
// panic took the node down.
func TestMetricsGatheredWhileStarting(t *testing.T) {
	cfg := republish.Config{Notify: republish.NotifyDefaults()}
	cfg.Notify.Enabled = true
	f := newSQLiteFixture(t, cfg)
	q := queuetest.Start(t)
	reg := prometheus.NewRegistry()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	gathered := make(chan int)
	stop := make(chan struct{})
	go func() {
		n := 0
		defer func() { gathered <- n }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := reg.Gather(); err != nil {
				t.Errorf("gather while starting: %v", err)
				return
			}
			n++
		}
	}()
	r, err := Start(ctx, Deps{Queue: q, Catalog: f.cat, Republish: f.srv, Registry: reg, Log: slog.New(slog.DiscardHandler),
		Links: NewLinkBook(), Spawn: func(string, func() error) {}})
	close(stop)
	n := <-gathered
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	if n == 0 {
		t.Fatal("the registry was never gathered while the hub started")
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "viaduct_notify_subscribers" {
			if v := mf.GetMetric()[0].GetGauge().GetValue(); v != 0 {
				t.Errorf("viaduct_notify_subscribers %v, want 0", v)
			}
			return
		}
	}
	t.Error("no viaduct_notify_subscribers gauge")
}
