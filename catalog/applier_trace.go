package catalog

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// maxBatchLinks bounds the links of one batch span: the SDK keeps 128 by
// default and drops the rest.
const maxBatchLinks = 128

// batchTrace gathers the trace contexts of the events of the batch being
// built, one per event (an invalid one when the event carried none).
type batchTrace struct {
	spans []trace.SpanContext
}

// add records the trace context ctx carries for one event.
func (b *batchTrace) add(ctx context.Context) {
	b.spans = append(b.spans, trace.SpanContextFromContext(ctx))
}

// start starts the span of writing batch to the catalog, and records the
// events' trace contexts in book for the notifications that tell of them. It is a child of
// the first traced event's span, so one change's trace runs from the
// harvest to the catalog, and it links every traced event it applied (up
// to maxBatchLinks), so each of the others leads to it too.
func (b *batchTrace) start(ctx context.Context, tracer trace.Tracer, batch []Applied, book SpanBook) (context.Context, trace.Span) {
	var links []trace.Link
	var parent trace.SpanContext
	for i, sc := range b.spans {
		if !sc.IsValid() {
			continue
		}
		if book != nil && i < len(batch) && batch[i].Event != nil {
			book.Add(batch[i].Event.Collection, sc)
		}
		if !parent.IsValid() {
			parent = sc
		}
		if len(links) < maxBatchLinks {
			links = append(links, trace.Link{SpanContext: sc})
		}
	}
	b.spans = nil
	if parent.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, parent)
	}
	return tracer.Start(ctx, "apply events", trace.WithSpanKind(trace.SpanKindConsumer), trace.WithLinks(links...),
		trace.WithAttributes(
			attribute.Int("viaduct.events", len(batch)),
			attribute.Int64("viaduct.first_seq", int64(batch[0].Seq)),
			attribute.Int64("viaduct.last_seq", int64(batch[len(batch)-1].Seq)),
		))
}

// endApplySpan ends the batch span with the batch's outcome.
func endApplySpan(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, fmt.Sprint(err))
	}
	span.End()
}
