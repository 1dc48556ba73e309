package queue_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
	"go.yaml.in/yaml/v3"
)

func TestConfigFromYAML(t *testing.T) {
	cfg := queue.Defaults()
	doc := `
url: nats://a:4222,nats://b:4222
replicas: 3
ack_wait: 90s
max_deliver: 6
backoff: [30s, 2m, 10m]
events_max_age: 8760h
events_compression: none
dead_max_bytes: 1073741824
`
	if err := yaml.Unmarshal([]byte(doc), &cfg); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("valid configuration rejected: %v", err)
	}
	if cfg.AckWait != 90*time.Second || len(cfg.Backoff) != 3 || cfg.Backoff[1] != 2*time.Minute ||
		cfg.EventsMaxAge != 365*24*time.Hour || cfg.Replicas != 3 || cfg.DuplicateWindow != 20*time.Second ||
		cfg.EventsCompression != "none" {
		t.Errorf("decoded %+v", cfg)
	}
}

func TestConfigValidateNamesTheField(t *testing.T) {
	for _, tc := range []struct {
		field string
		edit  func(*queue.Config)
	}{
		{"queue.dir", func(c *queue.Config) { c.Dir = "" }},
		{"queue.listen", func(c *queue.Config) { c.Listen = "localhost" }},
		{"queue.max_store", func(c *queue.Config) { c.MaxStore = 0 }},
		{"queue.replicas", func(c *queue.Config) { c.Replicas = 3 }},
		{"queue.url", func(c *queue.Config) { c.URL = "a:4222" }},
		{"queue.backoff", func(c *queue.Config) { c.MaxDeliver = 2 }},
		{"queue.consumer", func(c *queue.Config) { c.Consumer = "fetch.workers" }},
		{"queue.events_max_age", func(c *queue.Config) { c.EventsMaxAge = c.DuplicateWindow / 2 }},
		{"queue.max_deliver", func(c *queue.Config) { c.MaxDeliver = 0 }},
		{"queue.max_ack_pending", func(c *queue.Config) { c.MaxAckPending = 0 }},
		{"queue.events_compression", func(c *queue.Config) { c.EventsCompression = "gzip" }},
	} {
		t.Run(tc.field, func(t *testing.T) {
			cfg := queue.Defaults()
			cfg.Dir = t.TempDir()
			if err := cfg.Validate(); err != nil {
				t.Fatalf("defaults with a dir: %v", err)
			}
			tc.edit(&cfg)
			err := cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.field+":") {
				t.Fatalf("Validate() = %v, want an error naming %s", err, tc.field)
			}
		})
	}
}

func TestTokenEncodingIsReversible(t *testing.T) {
	for _, name := range []string{"", "plain", "example.org repo", "a*b>c", "%41", "thèses/2024", "tab\there", "-_"} {
		tok := queue.EncodeToken(name)
		if tok == "" || strings.ContainsAny(tok, ".*> \t\r\n") {
			t.Errorf("EncodeToken(%q) = %q is not one subject token", name, tok)
		}
		back, err := queue.DecodeToken(tok)
		if err != nil || back != name {
			t.Errorf("DecodeToken(%q) = %q, %v; want %q", tok, back, err, name)
		}
		if got, err := queue.SubjectName(queue.ChangeSubject(name)); err != nil || got != name {
			t.Errorf("SubjectName(ChangeSubject(%q)) = %q, %v", name, got, err)
		}
	}
	if queue.EncodeToken("a.b") == queue.EncodeToken("a_b") {
		t.Error("distinct names share a token")
	}
	for _, bad := range []string{"a.b", "%4", "%zz", "a b"} {
		if _, err := queue.DecodeToken(bad); err == nil {
			t.Errorf("DecodeToken(%q) accepted", bad)
		}
	}
}

func TestOpenRejectsInvalidConfig(t *testing.T) {
	cfg := queue.Defaults() // no dir
	if q, err := queue.Open(t.Context(), cfg, nil); err == nil {
		q.Close()
		t.Fatal("Open accepted an embedded configuration without a dir")
	}
}

func TestOpenReportsStoreFailure(t *testing.T) {
	cfg := queuetest.Config(t)
	cfg.Dir = filepath.Join(cfg.Dir, "file")
	if err := os.WriteFile(cfg.Dir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	q, err := queue.Open(t.Context(), cfg, nil)
	if err == nil {
		q.Close()
		t.Fatal("Open succeeded with a store directory that is a file")
	}
	if !strings.Contains(err.Error(), "not a directory") || time.Since(start) > 10*time.Second {
		t.Fatalf("after %s: %v", time.Since(start), err)
	}
}
