package websub

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// MaxLinks bounds the changes one delivery's span links to; the SDK keeps
// 128 links by default.
const MaxLinks = 128

type linksKey struct{}

// WithLinks returns ctx carrying the span contexts of the changes a
// publication notifies: Hub.Publish stores them with each delivery, whose
// span links to them, so an operator goes from a change to the POSTs that
// told subscribers of it.
func WithLinks(ctx context.Context, links ...trace.SpanContext) context.Context {
	return context.WithValue(ctx, linksKey{}, append(linksFrom(ctx), links...))
}

// linksFrom is what WithLinks put in ctx, then ctx's own span, if valid,
// at most MaxLinks.
func linksFrom(ctx context.Context) []trace.SpanContext {
	ls, _ := ctx.Value(linksKey{}).([]trace.SpanContext)
	out := make([]trace.SpanContext, 0, len(ls)+1)
	for _, sc := range append(ls, trace.SpanContextFromContext(ctx)) {
		if sc.IsValid() && len(out) < MaxLinks {
			out = append(out, sc)
		}
	}
	return out
}

// tracer makes the hub's delivery spans.
func (h *Hub) tracer() trace.Tracer {
	tp := h.tp
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return tp.Tracer("github.com/viaduct-mirror/viaduct/websub")
}

// startDelivery starts the span of one POST to a subscriber, linked to
// the changes the delivery notifies.
func (h *Hub) startDelivery(ctx context.Context, s Subscription, d Delivery) (context.Context, trace.Span) {
	links := make([]trace.Link, 0, len(d.Links))
	for _, sc := range d.Links {
		links = append(links, trace.Link{SpanContext: sc})
	}
	return h.tracer().Start(ctx, "websub deliver", trace.WithSpanKind(trace.SpanKindClient), trace.WithLinks(links...),
		trace.WithAttributes(attribute.String("websub.topic", d.Topic), attribute.String("url.full", s.Callback)))
}

// endDelivery ends a delivery's span with its outcome.
func endDelivery(span trace.Span, res outcome, err error) {
	span.SetAttributes(attribute.String("websub.outcome", [...]string{"delivered", "failed", "refused", "gone"}[res]))
	if err != nil && res != delivered {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
