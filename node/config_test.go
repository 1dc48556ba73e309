package node

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/viaduct-mirror/viaduct/queue"
)

// TestConfigsLoad keeps the example configurations true: every file under
// configs/ must load and validate.
func TestConfigsLoad(t *testing.T) {
	files, err := filepath.Glob("../configs/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example configurations found under ../configs (%v)", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			cfg, err := Load(f)
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.Sources) == 0 {
				t.Error("no sources")
			}
		})
	}
}

// TestConfigDefaultsAreDocumented checks that the full example states the
// defaults the code has, so operators can trust it.
func TestConfigDefaultsAreDocumented(t *testing.T) {
	cfg, err := Load("../configs/viaduct.yaml")
	if err != nil {
		t.Fatal(err)
	}
	def := Defaults()
	def.Sources = cfg.Sources
	def.Fill()
	if got, want := cfg.Queue.MaxStore, def.Queue.MaxStore; got != want {
		t.Errorf("queue.max_store: example says %d, default is %d", got, want)
	}
	if got, want := cfg.Blobs.SyncInterval, def.Blobs.SyncInterval; got != want {
		t.Errorf("blobs.sync_interval: example %v, default %v", got, want)
	}
	if got, want := cfg.Blobs.S3.TLS, def.Blobs.S3.TLS; got != want {
		t.Errorf("blobs.s3.tls: example says %v, default is %v", got, want)
	}
	if got, want := cfg.Fetch, def.Fetch; got != want {
		t.Errorf("fetch: example says %+v, default is %+v", got, want)
	}
	if got, want := cfg.Admin, def.Admin; got != want {
		t.Errorf("admin: example says %+v, default is %+v", got, want)
	}
	if got, want := cfg.Health, def.Health; got != want {
		t.Errorf("health: example says %+v, default is %+v", got, want)
	}
	if got, want := cfg.Harvest, def.Harvest; got != want {
		t.Errorf("harvest: example says %+v, default is %+v", got, want)
	}
	if got, want := cfg.Upstream.PerHostRate, def.Upstream.PerHostRate; got != want {
		t.Errorf("upstream.per_host_rate: example says %v, default is %v", got, want)
	}
}

func TestConfigErrorsNameTheField(t *testing.T) {
	cases := map[string]string{
		"blobs:\n  kind: tape\nsources: [{name: a, url: 'https://a.example/'}]\n":                   "blobs.kind",
		"blobs:\n  sync_interval: -1s\nsources: [{name: a, url: 'https://a.example/'}]\n":           "blobs.sync_interval",
		"log:\n  level: loud\nsources: [{name: a, url: 'https://a.example/'}]\n":                    "log.level",
		"sources: [{name: a, url: 'https://a.example/', schedule: 'every tuesday'}]\n":              "schedule",
		"sources: [{name: a, url: 'https://a.example/'}]\nlisten: nowhere\n":                        "listen",
		"sources: [{name: a, url: 'https://a.example/'}]\nfetch:\n  worker: 3\n":                    "worker",
		"public_url: ftp://x\nsources: [{name: a, url: 'https://a.example/'}]\n":                    "public_url",
		"sources: [{name: a, url: 'https://a.example/'}, {name: a, url: 'https://b.example/'}]\n":   "sources",
		"sources: [{name: a, url: 'https://a.example/'}]\nfetch:\n  max_parked: 9700\n":             "queue.max_ack_pending",
		"sources: [{name: a, url: 'https://a.example/'}]\nqueue:\n  max_ack_pending: 2000\n":        "fetch.max_parked",
		"sources: [{name: a, url: 'https://a.example/'}]\nqueue:\n  backoff: [30s, 10s]\n":          "fetch.in_progress_every",
		"sources: [{name: a, url: 'https://a.example/'}]\nqueue:\n  backoff: []\n  ack_wait: 30s\n": "queue.ack_wait (30s)",
	}
	for body, want := range cases {
		f := filepath.Join(t.TempDir(), "c.yaml")
		if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Load(f)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("config %q: got error %v, want one naming %q", body, err, want)
		}
	}
}

// At the defaults, the lot of parked changes holds every message the
// harvester may queue (twice harvest.max_backlog, in groups), so that a
// Source queued behind others is never held back by a full lot, and it
// fits the CHANGES consumer's pending window with the workers' share.
func TestLotHoldsWhatTheHarvesterQueues(t *testing.T) {
	def := Defaults()
	def.Fill()
	queued := 2 * def.Harvest.MaxBacklog / queue.GroupMax
	if def.Fetch.MaxParked <= queued {
		t.Errorf("fetch.max_parked %d: the harvester may queue %d messages of CHANGES at its defaults", def.Fetch.MaxParked, queued)
	}
	if err := def.checkPending(); err != nil {
		t.Errorf("the defaults: %v", err)
	}
}
