package node

import (
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// tracer is the node's own tracer (the applier's spans).
func (o Options) tracer() trace.Tracer {
	tp := o.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return tp.Tracer("github.com/viaduct-mirror/viaduct/node")
}

// publicHandler wraps the public listener's handler in a server span per
// request, continuing the trace a Destination sends in traceparent.
// Scrapes and health checks make no spans: they would drown the rest.
func publicHandler(h http.Handler, o Options) http.Handler {
	opts := []otelhttp.Option{
		otelhttp.WithPropagators(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return "HTTP " + r.Method }),
		otelhttp.WithFilter(func(r *http.Request) bool {
			switch r.URL.Path {
			case "/metrics", "/healthz", "/livez", "/readyz":
				return false
			}
			return true
		}),
	}
	if o.TracerProvider != nil {
		opts = append(opts, otelhttp.WithTracerProvider(o.TracerProvider))
	}
	return otelhttp.NewHandler(h, "viaduct", opts...)
}
