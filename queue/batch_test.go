package queue_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
)

func TestPublishChangesStoresEveryChangeOnce(t *testing.T) {
	reg := prometheus.NewRegistry()
	q := queuetest.Start(t, func(c *queue.Config) { c.Registerer = reg })
	ctx := context.Background()
	// More than one window of messages, queued twice (a pass retried
	// whole): the second time is de-duplicated, not stored again.
	var batch []*viaduct.Change
	for i := range 1300 {
		batch = append(batch, testChange(i))
	}
	groups := (1300 + queue.GroupMax - 1) / queue.GroupMax
	for range 2 {
		if err := q.PublishChanges(ctx, batch); err != nil {
			t.Fatalf("PublishChanges: %v", err)
		}
	}
	if n := streamMsgs(t, q, queue.StreamChanges); n != uint64(groups) {
		t.Fatalf("CHANGES holds %d messages, want %d groups", n, groups)
	}
	if got := counter(t, reg, "viaduct_queue_published_total", queue.StreamChanges); got != float64(groups) {
		t.Errorf("published counter = %v, want %d", got, groups)
	}
	if got := counter(t, reg, "viaduct_queue_duplicates_total", queue.StreamChanges); got != float64(groups) {
		t.Errorf("duplicates counter = %v, want %d", got, groups)
	}
	// The workers see every change once, in the order they were queued.
	cs, err := q.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1300 {
		m, err := cs.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := testChange(i).URI; m.Change.URI != want {
			t.Fatalf("change %d is %s, want %s", i, m.Change.URI, want)
		}
		m.Ack(ctx)
	}
	eventually(t, 5*time.Second, "CHANGES to empty", func() bool { return streamMsgs(t, q, queue.StreamChanges) == 0 })
}

// A batch of one change is that change's own message, de-duplicated with
// the same change published alone.
func TestPublishChangesOfOneIsTheChange(t *testing.T) {
	q := queuetest.Start(t)
	ctx := context.Background()
	if err := q.PublishChanges(ctx, []*viaduct.Change{testChange(1)}); err != nil {
		t.Fatal(err)
	}
	if err := q.PublishChange(ctx, testChange(1)); err != nil {
		t.Fatal(err)
	}
	if n := streamMsgs(t, q, queue.StreamChanges); n != 1 {
		t.Fatalf("CHANGES holds %d messages, want 1", n)
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
