package queue_test

import (
	"context"
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
)

func TestPublishChangesStoresEveryChangeOnce(t *testing.T) {
	reg := prometheus.NewRegistry()
	q := queuetest.Start(t, func(c *queue.Config) { c.Registerer = reg })
	ctx := context.Background()
	// More than one window, with every change of the first window sent
	// twice: the copies are de-duplicated, not stored again.
	var batch []*viaduct.Change
	for i := range 1300 {
		batch = append(batch, testChange(i))
	}
	for i := range 100 {
		batch = append(batch, testChange(i))
	}
	if err := q.PublishChanges(ctx, batch); err != nil {
		t.Fatalf("PublishChanges: %v", err)
	}
	if n := streamMsgs(t, q, queue.StreamChanges); n != 1300 {
		t.Fatalf("CHANGES holds %d messages, want 1300", n)
	}
	if got := counter(t, reg, "viaduct_queue_published_total", queue.StreamChanges); got != 1300 {
		t.Errorf("published counter = %v, want 1300", got)
	}
	if got := counter(t, reg, "viaduct_queue_duplicates_total", queue.StreamChanges); got != 100 {
		t.Errorf("duplicates counter = %v, want 100", got)
	}
	// The workers see them in the order they were queued.
	cs, err := q.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		m, err := cs.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := testChange(i).URI; m.Change.URI != want {
			t.Errorf("change %d is %s, want %s", i, m.Change.URI, want)
		}
		m.Ack(ctx)
	}
}

func TestPublishChangesEmpty(t *testing.T) {
	q := queuetest.Start(t)
	if err := q.PublishChanges(context.Background(), nil); err != nil {
		t.Fatalf("PublishChanges(nil): %v", err)
	}
}

func TestPublishChangesCancelled(t *testing.T) {
	q := queuetest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := q.PublishChanges(ctx, []*viaduct.Change{testChange(1)})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("PublishChanges on a cancelled context: %v, want context.Canceled", err)
	}
	if n := streamMsgs(t, q, queue.StreamChanges); n != 0 {
		t.Errorf("CHANGES holds %d messages after a cancelled batch, want 0", n)
	}
}
