package telemetry

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace/noop"
)

// TracingConfig sends OpenTelemetry traces somewhere. With no endpoint,
// spans are made (so trace context still travels through NATS) but not
// exported.
type TracingConfig struct {
	// Endpoint is an OTLP/HTTP collector, e.g. http://127.0.0.1:4318.
	// Empty: the one OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT names, if any;
	// set, it wins over the environment (docs/configuration.md).
	Endpoint string `yaml:"endpoint"`
	// SampleRatio is the share of traces kept, 0 to 1. Default 1.
	SampleRatio float64 `yaml:"sample_ratio"`
}

// SetupTracing installs the process's OpenTelemetry tracer provider and
// W3C trace-context propagation. It belongs to the command, not to a node:
// the global provider is process-wide. The returned function flushes and
// stops the exporter.
//
// The exporter is configured from the file and from the standard OTEL_*
// environment variables; the file wins where both say something (see
// docs/configuration.md, "Tracing").
func SetupTracing(ctx context.Context, c TracingConfig, version string) (func(context.Context) error, error) {
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	tp, err := newTracerProvider(ctx, c, version)
	if err != nil || tp == nil {
		if err == nil {
			// Nothing exports: spans carry the trace context they were
			// given (a change's, from its message) and record nothing, as
			// the global provider's do before one is set, without its
			// allocation and delegation on every span.
			otel.SetTracerProvider(noop.NewTracerProvider())
		}
		return func(context.Context) error { return nil }, err
	}
	otel.SetTracerProvider(tp)
	return tp.Shutdown, nil
}

// newTracerProvider builds the provider that exports to the file's
// endpoint or, when the file names none, to the one OTEL_* names; nil
// when there is nowhere to export to.
func newTracerProvider(ctx context.Context, c TracingConfig, version string) (*sdktrace.TracerProvider, error) {
	var opts []otlptracehttp.Option
	switch {
	case c.Endpoint != "":
		u, err := url.Parse(c.Endpoint)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("tracing.endpoint: %q is not a URL", c.Endpoint)
		}
		opts = append(opts, otlptracehttp.WithEndpoint(u.Host))
		if u.Scheme == "http" {
			opts = append(opts, otlptracehttp.WithInsecure())
		}
		if u.Path != "" && u.Path != "/" {
			opts = append(opts, otlptracehttp.WithURLPath(u.Path))
		}
	case !envExports():
		return nil, nil
	default:
		// The exporter reads OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT,
		// _HEADERS, _TIMEOUT, _COMPRESSION and _CERTIFICATE itself.
		if p := envFirst("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"); p != "" && p != "http/protobuf" {
			return nil, fmt.Errorf("tracing: OTEL_EXPORTER_OTLP_PROTOCOL %q: only http/protobuf is supported", p)
		}
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES come after the
	// defaults and so override them: one service name per node is how an
	// operator tells nodes apart.
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName("viaduct"), semconv.ServiceVersion(version)),
		resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("tracing: resource from OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	return sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(c.SampleRatio))),
	), nil
}

// envExports reports whether the environment names an OTLP endpoint for
// traces and does not turn tracing off.
func envExports() bool {
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") || os.Getenv("OTEL_TRACES_EXPORTER") == "none" {
		return false
	}
	return envFirst("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT") != ""
}

// envFirst is the first of the variables that is set.
func envFirst(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}
