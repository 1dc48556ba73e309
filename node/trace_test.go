package node

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/viaduct-mirror/viaduct/sim"
)

// TestOneChangeIsOneTrace follows one change with an in-memory exporter:
// the pass over its Source, the document read, the worker's fetch (child
// of the pass, through the change's message headers), the GET of the
// bitstream (child of the fetch) and the catalog's batch (child of the
// fetch, through the event's headers) are one trace.
func TestOneChangeIsOneTrace(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })

	src := startSource(t, sim.Config{Resources: 1, Seed: 41})
	cfg := testConfig(t.TempDir(), sourceConfig("s", src))
	cfg.Fill()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	n, err := Start(context.Background(), cfg, Options{Version: "test", TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	mustSync(t, n, "s")
	waitSettled(t, n, time.Minute)

	var spans tracetest.SpanStubs
	byName := func(prefix string) []tracetest.SpanStub {
		var out []tracetest.SpanStub
		for _, s := range spans {
			if strings.HasPrefix(s.Name, prefix) {
				out = append(out, s)
			}
		}
		return out
	}
	// The batch span ends after the catalog has the event; wait for it.
	waitFor(t, 10*time.Second, "the catalog's batch span", func() bool {
		spans = exp.GetSpans()
		return len(byName("apply events")) > 0
	})

	passes, fetches, applies := byName("harvest s"), byName("fetch created"), byName("apply events")
	if len(passes) != 1 || len(fetches) != 1 || len(applies) != 1 {
		t.Fatalf("spans: %d passes, %d fetches, %d batches; want 1 each (all: %v)", len(passes), len(fetches), len(applies), names(spans))
	}
	pass, fetch, apply := passes[0], fetches[0], applies[0]
	trace := pass.SpanContext.TraceID()
	for _, s := range []tracetest.SpanStub{fetch, apply} {
		if s.SpanContext.TraceID() != trace {
			t.Errorf("span %q is in trace %s, the pass in %s", s.Name, s.SpanContext.TraceID(), trace)
		}
	}
	if fetch.Parent.SpanID() != pass.SpanContext.SpanID() {
		t.Errorf("fetch's parent is %s, want the pass %s", fetch.Parent.SpanID(), pass.SpanContext.SpanID())
	}
	if apply.Parent.SpanID() != fetch.SpanContext.SpanID() {
		t.Errorf("batch's parent is %s, want the fetch %s", apply.Parent.SpanID(), fetch.SpanContext.SpanID())
	}
	if !slices.ContainsFunc(apply.Links, func(l sdktrace.Link) bool { return l.SpanContext.SpanID() == fetch.SpanContext.SpanID() }) {
		t.Errorf("batch links %v, want the fetch among them", apply.Links)
	}
	docs := 0
	for _, s := range byName("read document") {
		if s.SpanContext.TraceID() == trace && s.Parent.SpanID() == pass.SpanContext.SpanID() {
			docs++
		}
	}
	if docs == 0 {
		t.Errorf("no document read under the pass (all: %v)", names(spans))
	}
	gets := 0
	for _, s := range byName("upstream GET") {
		if s.Parent.SpanID() == fetch.SpanContext.SpanID() {
			gets++
		}
	}
	if gets != 1 {
		t.Errorf("%d GETs under the fetch, want 1 (all: %v)", gets, names(spans))
	}
}

// TestPublicRequestsHaveServerSpans: a Destination's request gets a server
// span, continuing the trace it sent in traceparent; scrapes get none.
func TestPublicRequestsHaveServerSpans(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	cfg := testConfig(t.TempDir(), sourceConfig("s", startSource(t, sim.Config{Resources: 1, Seed: 42})))
	cfg.Fill()
	n, err := Start(context.Background(), cfg, Options{Version: "test", TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })

	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	for _, path := range []string{"/.well-known/resourcesync", "/metrics"} {
		req, _ := http.NewRequest(http.MethodGet, n.URL()+path, nil)
		req.Header.Set("traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	var server []tracetest.SpanStub
	waitFor(t, 10*time.Second, "a server span", func() bool {
		server = nil
		for _, s := range exp.GetSpans() {
			if s.SpanKind == oteltrace.SpanKindServer {
				server = append(server, s)
			}
		}
		return len(server) > 0
	})
	if len(server) != 1 {
		t.Fatalf("%d server spans, want 1 (the scrape makes none): %v", len(server), names(exp.GetSpans()))
	}
	if got := server[0].SpanContext.TraceID().String(); got != traceID {
		t.Errorf("server span in trace %s, want the caller's %s", got, traceID)
	}
}

func names(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

// TestHubDeliveryLinksTheChange: the POST telling a subscriber of a change
// has a span linked to the change's trace (its fetch span), through the
// catalog and HUBOUT, which carry no trace of their own.
func TestHubDeliveryLinksTheChange(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	src := startSource(t, sim.Config{Resources: 1, Seed: 43})
	cfg := notifyConfig(t.TempDir(), src)
	cfg.Fill()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	n, err := Start(context.Background(), cfg, Options{Version: "test", TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	d := startDownstream(t)
	d.subscribeTo(t, n)

	mustSync(t, n, "s")
	waitSettled(t, n, time.Minute)
	waitFor(t, 20*time.Second, "the change to be notified", func() bool { return countEntries(d.notifications()) >= 1 })

	var fetch, deliver []tracetest.SpanStub
	waitFor(t, 10*time.Second, "the delivery's span", func() bool {
		fetch, deliver = nil, nil
		for _, s := range exp.GetSpans() {
			switch {
			case strings.HasPrefix(s.Name, "fetch "):
				fetch = append(fetch, s)
			case s.Name == "websub deliver":
				deliver = append(deliver, s)
			}
		}
		return len(deliver) > 0
	})
	if len(fetch) != 1 {
		t.Fatalf("%d fetch spans, want 1", len(fetch))
	}
	linked := false
	for _, s := range deliver {
		for _, l := range s.Links {
			if l.SpanContext.TraceID() == fetch[0].SpanContext.TraceID() && l.SpanContext.SpanID() == fetch[0].SpanContext.SpanID() {
				linked = true
			}
		}
	}
	if !linked {
		t.Errorf("no delivery span links the change's fetch span %s", fetch[0].SpanContext.SpanID())
	}
}
