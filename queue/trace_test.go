package queue_test

import (
	"context"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
	"go.opentelemetry.io/otel/trace"
)

func TestTraceContextCrossesTheQueue(t *testing.T) {
	q := queuetest.Start(t)
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
		SpanID:     trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8},
		TraceFlags: trace.FlagsSampled,
	})
	ctx := trace.ContextWithSpanContext(context.Background(), sc)

	if err := q.PublishChange(ctx, testChange(1)); err != nil {
		t.Fatal(err)
	}
	s, err := q.Changes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	m := next(t, s)
	got := trace.SpanContextFromContext(m.Context(context.Background()))
	if got.TraceID() != sc.TraceID() || got.SpanID() != sc.SpanID() || !got.IsSampled() || !got.IsRemote() {
		t.Errorf("change carried %v, want remote %v", got, sc)
	}

	if _, err := q.PublishEvent(ctx, testEvent(1)); err != nil {
		t.Fatal(err)
	}
	got = trace.SpanContext{}
	ectx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = q.Events(ectx, 1, func(ctx context.Context, _ uint64, _ time.Time, _ *viaduct.Event) error {
		got = trace.SpanContextFromContext(ctx)
		cancel()
		return nil
	})
	if got.TraceID() != sc.TraceID() || got.SpanID() != sc.SpanID() || !got.IsRemote() {
		t.Errorf("event carried %v, want remote %v", got, sc)
	}
}
