package telemetry

import (
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Handler wraps a listener's handler in a server span per request,
// continuing the trace a Destination sends in traceparent, made by tp
// (nil: the global provider). Scrapes and health checks make no spans:
// they would drown the rest.
func Handler(h http.Handler, tp trace.TracerProvider) http.Handler {
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
	if tp != nil {
		opts = append(opts, otelhttp.WithTracerProvider(tp))
	}
	return otelhttp.NewHandler(h, "viaduct", opts...)
}
