// Package queuetest starts a real queue for tests: an embedded nats-server
// with JetStream on a random loopback port, storing in t.TempDir().
package queuetest

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/queue"
)

// Start opens a queue on an embedded server, closed by t.Cleanup. Options
// adjust the test configuration (redelivery, limits) before it opens.
func Start(t testing.TB, opts ...func(*queue.Config)) *queue.Queue {
	t.Helper()
	cfg := Config(t)
	for _, o := range opts {
		o(&cfg)
	}
	q, err := queue.Open(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("queuetest: open queue: %v", err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

// Config is the configuration Start uses: small limits, a store in
// t.TempDir(), and redelivery fast enough for tests (no backoff).
func Config(t testing.TB) queue.Config {
	cfg := queue.Defaults()
	cfg.Dir = t.TempDir()
	cfg.MaxMemory = 64 << 20
	cfg.MaxStore = 1 << 30
	cfg.AckWait = 2 * time.Second
	cfg.MaxDeliver = 3
	cfg.Backoff = nil
	return cfg
}

// PublishEvents publishes evs to EVENTS without waiting for each, then
// waits until every one is stored.
func PublishEvents(t testing.TB, q *queue.Queue, evs []*viaduct.Event) {
	t.Helper()
	ctx := context.Background()
	pending := make([]*queue.PendingEvent, 0, len(evs))
	for _, ev := range evs {
		pe, err := q.PublishEventAsync(ctx, ev)
		if err != nil {
			t.Fatalf("queuetest: publish event for %s: %v", ev.URI, err)
		}
		pending = append(pending, pe)
	}
	for _, pe := range pending {
		if _, err := pe.Wait(ctx); err != nil {
			t.Fatalf("queuetest: %v", err)
		}
	}
}
