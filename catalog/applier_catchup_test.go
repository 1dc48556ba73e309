package catalog

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// TestApplierCatchesUpInLargeBatches starts an applier far behind EVENTS,
// as after a long stop: it writes batches larger than the ordinary bound
// while it catches up, and every event reaches the catalog once.
func TestApplierCatchesUpInLargeBatches(t *testing.T) {
	ctx := context.Background()
	q := queuetest.Start(t)
	cat, err := Open(ctx, filepath.Join(t.TempDir(), "catalog.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })

	const n = 3 * applyCatchUp
	evs := make([]*viaduct.Event, n)
	for i := range evs {
		uri := fmt.Sprintf("http://example.org/r/%d", i)
		digest := fmt.Sprintf("%064x", i)
		evs[i] = &viaduct.Event{Source: "s", Collection: "s", URI: uri, Op: resourcesync.Created,
			SHA256: digest, MD5: digest[:32], Length: 1, Type: "text/plain",
			Upstream: viaduct.Change{Source: "s", Collection: "s", URI: uri, Op: resourcesync.Created, Time: time.Unix(int64(i), 0)}}
	}
	queuetest.PublishEvents(t, q, evs)

	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	t.Cleanup(func() { tp.Shutdown(ctx) })
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		a := &Applier{events: q, cat: cat, log: slog.New(slog.DiscardHandler), tracer: tp.Tracer("test")}
		done <- a.Run(runCtx)
	}()
	testutil.Eventually(t, 2*time.Minute, "the catalog to apply every event", func() bool {
		last, err := cat.LastApplied(ctx)
		return err == nil && last == n
	})
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	largest, total := 0, 0
	for _, s := range exp.GetSpans() {
		for _, kv := range s.Attributes {
			if kv.Key == attribute.Key("viaduct.events") {
				largest = max(largest, int(kv.Value.AsInt64()))
				total += int(kv.Value.AsInt64())
			}
		}
	}
	if total != n {
		t.Errorf("the batches held %d events in all, want %d", total, n)
	}
	if largest <= applyBatchSize || largest > applyCatchUp {
		t.Errorf("largest batch while catching up: %d events, want more than %d and at most %d", largest, applyBatchSize, applyCatchUp)
	}
	held, _, err := cat.CountResources(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if held != n {
		t.Errorf("catalog holds %d resources, want %d", held, n)
	}
}
