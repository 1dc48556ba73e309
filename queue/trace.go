package queue

import (
	"context"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/propagation"
)

// headerCarrier lets an OpenTelemetry propagator read and write trace
// context in NATS message headers, so a trace started by the harvester
// continues in the worker and the applier on other nodes.
type headerCarrier nats.Header

var _ propagation.TextMapCarrier = headerCarrier(nil)

func (h headerCarrier) Get(key string) string { return nats.Header(h).Get(key) }

func (h headerCarrier) Set(key, value string) { nats.Header(h).Set(key, value) }

func (h headerCarrier) Keys() []string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	return keys
}

// defaultPropagator is W3C trace context plus baggage; the process-wide
// otel propagator is not consulted, so two queues in one process (tests,
// a node and its demo) never share state.
func defaultPropagator() propagation.TextMapPropagator {
	return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
}

// inject writes ctx's trace context into h.
func (q *Queue) inject(ctx context.Context, h nats.Header) {
	q.prop.Inject(ctx, headerCarrier(h))
}

// extract returns parent carrying the trace context found in h.
func (q *Queue) extract(parent context.Context, h nats.Header) context.Context {
	if h == nil {
		return parent
	}
	return q.prop.Extract(parent, headerCarrier(h))
}
