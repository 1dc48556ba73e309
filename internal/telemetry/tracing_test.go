package telemetry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
)

// collector counts the OTLP/HTTP trace exports it receives.
func collector(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v1/traces" {
			n.Add(1)
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// exportOne makes one span with a provider built from c and the
// environment, and flushes it; false when no provider was built.
func exportOne(t *testing.T, c TracingConfig) bool {
	t.Helper()
	tp, err := newTracerProvider(context.Background(), c, "test")
	if err != nil {
		t.Fatal(err)
	}
	if tp == nil {
		return false
	}
	_, span := tp.Tracer("test").Start(context.Background(), "one")
	span.End()
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatalf("flush: %v", err)
	}
	return true
}

// TestTracingFromTheEnvironment: with no endpoint in the file, the OTEL_*
// variables name the collector; with one in the file, the file wins.
func TestTracingFromTheEnvironment(t *testing.T) {
	envSrv, envGot := collector(t)
	fileSrv, fileGot := collector(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", envSrv.URL)
	t.Setenv("OTEL_SERVICE_NAME", "viaduct-test")

	if !exportOne(t, TracingConfig{SampleRatio: 1}) {
		t.Fatal("OTEL_EXPORTER_OTLP_ENDPOINT set and no provider built")
	}
	if envGot.Load() == 0 {
		t.Error("nothing exported to the collector OTEL_EXPORTER_OTLP_ENDPOINT names")
	}

	envGot.Store(0)
	exportOne(t, TracingConfig{Endpoint: fileSrv.URL, SampleRatio: 1})
	if fileGot.Load() == 0 || envGot.Load() != 0 {
		t.Errorf("file endpoint got %d exports, environment's %d: the file must win", fileGot.Load(), envGot.Load())
	}

	t.Setenv("OTEL_SDK_DISABLED", "true")
	if exportOne(t, TracingConfig{SampleRatio: 1}) {
		t.Error("OTEL_SDK_DISABLED=true and a provider was built")
	}
	t.Setenv("OTEL_SDK_DISABLED", "")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	if _, err := newTracerProvider(context.Background(), TracingConfig{SampleRatio: 1}, "test"); err == nil {
		t.Error("OTEL_EXPORTER_OTLP_PROTOCOL=grpc accepted; only http/protobuf is exported")
	}
}

// TestNothingExportedCarriesTraceContext: with no collector, a span
// started under a trace context taken from a message carries that
// context on (a change's trace goes on through NATS to its event), records
// nothing, and costs no more than the context that holds it.
func TestNothingExportedCarriesTraceContext(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	shutdown, err := SetupTracing(context.Background(), TracingConfig{SampleRatio: 1}, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer shutdown(context.Background())

	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	prop := otel.GetTextMapPropagator()
	ctx := prop.Extract(context.Background(), propagation.MapCarrier{"traceparent": parent})
	ctx, span := otel.Tracer("test").Start(ctx, "fetch")
	if span.IsRecording() {
		t.Error("a span records with nothing to export it")
	}
	out := propagation.MapCarrier{}
	prop.Inject(ctx, out)
	if out["traceparent"] != parent {
		t.Errorf("the trace context carried on is %q, want the one taken, %q", out["traceparent"], parent)
	}
	span.End()

	tracer := otel.Tracer("test")
	if n := testing.AllocsPerRun(100, func() {
		_, span := tracer.Start(ctx, "fetch")
		span.End()
	}); n > 1 {
		t.Errorf("a span not exported costs %v allocations, want at most 1 (its context)", n)
	}
}
