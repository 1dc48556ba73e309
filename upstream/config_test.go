package upstream

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.yaml.in/yaml/v3"
)

func TestDefaultConfigValid(t *testing.T) {
	cfg := DefaultConfig()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if cfg.AllowLoopback || cfg.AllowPrivate || cfg.PerHostConcurrency != 4 || cfg.MaxRedirects != 5 {
		t.Errorf("defaults %+v", cfg)
	}
	if !strings.HasPrefix(cfg.UserAgent, "viaduct/") {
		t.Errorf("User-Agent %q should name viaduct", cfg.UserAgent)
	}
}

func TestConfigValidateNamesField(t *testing.T) {
	for field, mutate := range map[string]func(*Config){
		"max_attempts":           func(c *Config) { c.MaxAttempts = 0 },
		"per_host_concurrency":   func(c *Config) { c.PerHostConcurrency = -1 },
		"per_host_rate":          func(c *Config) { c.PerHostRate = 0 },
		"backoff_max":            func(c *Config) { c.BackoffMax = time.Millisecond },
		"request_timeout":        func(c *Config) { c.RequestTimeout = 0 },
		"max_document_bytes":     func(c *Config) { c.MaxDocumentBytes = 0 },
		"user_agent":             func(c *Config) { c.UserAgent = "" },
		"allowed_authorities[1]": func(c *Config) { c.AllowedAuthorities = []string{"https://ok.example.org", "ftp://x"} },
	} {
		cfg := DefaultConfig()
		mutate(&cfg)
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: Validate() = %v, want an error naming the field", field, err)
		}
	}
}

func TestConfigYAML(t *testing.T) {
	cfg := DefaultConfig()
	src := `
user_agent: "viaduct/9 (+https://mirror.example.org)"
request_timeout: 90s
per_host_concurrency: 2
allowed_authorities: ["https://mirror.example.org"]
allow_private: true
`
	if err := yaml.Unmarshal([]byte(src), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.RequestTimeout != 90*time.Second || cfg.PerHostConcurrency != 2 || !cfg.AllowPrivate ||
		cfg.MaxRedirects != 5 || len(cfg.AllowedAuthorities) != 1 {
		t.Errorf("decoded %+v", cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Error(err)
	}
}

func TestMetricsAndSpans(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, "12345")
	})
	reg := prometheus.NewRegistry()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	cfg := testConfig(nil)
	c, err := New(cfg, Options{Registerer: reg, TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := NewPolicy(s.URL, cfg)
	c = c.WithPolicy(p)
	ctx := context.Background()
	resp, err := c.Get(ctx, Request{URI: s.URL + "/ok", Source: "sim"})
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	c.Get(ctx, Request{URI: s.URL + "/missing", Source: "sim"})
	c.Get(ctx, Request{URI: "http://elsewhere.example.org/", Source: "sim"})

	host := strings.TrimPrefix(s.URL, "http://")
	m := c.core.metrics
	if got := counterValue(t, m.requests.WithLabelValues(host, "200")); got != 1 {
		t.Errorf("requests 200 = %v", got)
	}
	if got := counterValue(t, m.requests.WithLabelValues(host, "404")); got != 1 {
		t.Errorf("requests 404 = %v", got)
	}
	if got := counterValue(t, m.bytes.WithLabelValues(host)); got != 5 {
		t.Errorf("bytes = %v", got)
	}
	if got := counterValue(t, m.refused.WithLabelValues("elsewhere.example.org")); got != 1 {
		t.Errorf("refused = %v", got)
	}
	if fams, err := reg.Gather(); err != nil || len(fams) != 3 {
		t.Errorf("registry gathered %d families, %v; want requests, bytes, refused", len(fams), err)
	}
	if spans := rec.Ended(); len(spans) != 3 {
		t.Errorf("%d spans, want one per Get", len(spans))
	}
}

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
