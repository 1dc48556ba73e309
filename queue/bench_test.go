package queue_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
)

// BenchmarkPublishChange measures queuing distinct changes, each waiting
// for its PubAck (file store, one replica).
func BenchmarkPublishChange(b *testing.B) {
	q := queuetest.Start(b)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := q.PublishChange(ctx, testChange(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "changes/s")
}

// BenchmarkTakeAndAck measures one worker's Next plus a confirmed Ack.
func BenchmarkTakeAndAck(b *testing.B) {
	q := queuetest.Start(b)
	ctx := context.Background()
	for i := range b.N {
		if err := q.PublishChange(ctx, testChange(i)); err != nil {
			b.Fatal(err)
		}
	}
	s, err := q.Changes(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		m, err := s.Next(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := m.Ack(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "changes/s")
}

// BenchmarkEventsReplay measures an applier catching up from seq 1.
func BenchmarkEventsReplay(b *testing.B) {
	q := queuetest.Start(b)
	ctx := context.Background()
	for i := range b.N {
		if _, err := q.PublishEvent(ctx, testEvent(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	rctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	n := 0
	err := q.Events(rctx, 1, func(context.Context, uint64, time.Time, *viaduct.Event) error {
		if n++; n == b.N {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || n != b.N {
		b.Fatalf("replayed %d of %d: %v", n, b.N, err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
