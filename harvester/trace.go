package harvester

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// tracerName names the harvester's spans' instrumentation scope.
const tracerName = "github.com/viaduct-mirror/viaduct/harvester"

// tracer makes the harvester's spans: one per pass, one per document read.
// A change queued during a pass carries the pass's span context in its
// message headers, so the worker's fetch span is its child and one trace
// follows the change from the Source to the catalog.
func (h *Harvester) tracer() trace.Tracer {
	tp := h.deps.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return tp.Tracer(tracerName)
}

// startPass starts the span of a pass over s.
func (h *Harvester) startPass(ctx context.Context, s *source) (context.Context, trace.Span) {
	return h.tracer().Start(ctx, "harvest "+s.Name, trace.WithAttributes(
		attribute.String("viaduct.source", s.Name),
		attribute.String("viaduct.collection", s.Collection),
	))
}

// startDocument starts the span of reading one document; the document's
// Close ends it.
func (p *pass) startDocument(ctx context.Context, uri string) (context.Context, trace.Span) {
	return p.h.tracer().Start(ctx, "read document", trace.WithAttributes(
		attribute.String("viaduct.source", p.src.Name),
		attribute.String("viaduct.uri", uri),
	))
}

// endSpan ends span, recording err (but not a pass cut short by shutdown
// or a document not modified) as its status.
func endSpan(span trace.Span, err error) {
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, errNotModified) {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
