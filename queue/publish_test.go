package queue_test

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
)

func TestPublishChangeTwiceQueuesOnce(t *testing.T) {
	reg := prometheus.NewRegistry()
	q := queuetest.Start(t, func(c *queue.Config) { c.Registerer = reg })
	ctx := context.Background()
	for range 2 {
		if err := q.PublishChange(ctx, testChange(1)); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.PublishChange(ctx, testChange(2)); err != nil {
		t.Fatal(err)
	}
	if n := streamMsgs(t, q, queue.StreamChanges); n != 2 {
		t.Fatalf("CHANGES holds %d messages, want 2 (one per distinct change)", n)
	}
	if got := counter(t, reg, "viaduct_queue_published_total", queue.StreamChanges); got != 2 {
		t.Errorf("published counter = %v, want 2", got)
	}
	if got := counter(t, reg, "viaduct_queue_duplicates_total", queue.StreamChanges); got != 1 {
		t.Errorf("duplicates counter = %v, want 1", got)
	}
}

func TestPublishEventTwiceReturnsSameSeq(t *testing.T) {
	q := queuetest.Start(t)
	ctx := context.Background()
	first, err := q.PublishEvent(ctx, testEvent(1))
	if err != nil {
		t.Fatal(err)
	}
	again, err := q.PublishEvent(ctx, testEvent(1))
	if err != nil {
		t.Fatalf("duplicate publish is not an error, got %v", err)
	}
	if again != first {
		t.Fatalf("duplicate event got seq %d, want the original %d", again, first)
	}
	other, err := q.PublishEvent(ctx, testEvent(2))
	if err != nil {
		t.Fatal(err)
	}
	if other != first+1 {
		t.Fatalf("next event got seq %d, want %d", other, first+1)
	}
	if n := streamMsgs(t, q, queue.StreamEvents); n != 2 {
		t.Fatalf("EVENTS holds %d messages, want 2", n)
	}
	if last, err := q.LastEventSeq(ctx); err != nil || last != other {
		t.Fatalf("LastEventSeq = %d, %v; want %d", last, err, other)
	}
}

// counter reads a counter's value for one stream label from reg.
func counter(t *testing.T, reg *prometheus.Registry, name, stream string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "stream" && l.GetValue() == stream {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
