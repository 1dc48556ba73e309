package node

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestConfigEventsRetention: EVENTS' retention defaults to a week with
// snapshots on and to for ever with them off, and a retention the
// snapshot schedule does not cover is refused, naming the field.
func TestConfigEventsRetention(t *testing.T) {
	const src = "sources: [{name: a, url: 'https://a.example/'}]\n"
	for _, c := range []struct {
		body    string
		maxAge  time.Duration
		problem string
	}{
		{src, DefaultEventsMaxAge, ""},
		{src + "snapshots: {interval: 0s}\n", 0, ""},
		{src + "snapshots: {interval: 0s}\nqueue: {events_max_age: 0s}\n", 0, ""},
		{src + "queue: {events_max_age: 0s}\n", 0, ""},
		{src + "snapshots: {interval: 10m}\nqueue: {events_max_age: 4h}\n", 4 * time.Hour, ""},
		{src + "snapshots: {interval: 0s}\nqueue: {events_max_age: 168h}\n", 0, "snapshots off"},
		{src + "queue: {events_max_age: 12h}\n", 0, "shorter than 24 snapshot intervals"},
		{src + "snapshots: {interval: 1h, keep: 0}\n", 0, "snapshots.keep"},
	} {
		f := filepath.Join(t.TempDir(), "viaduct.yaml")
		if err := os.WriteFile(f, []byte(c.body), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(f)
		switch {
		case c.problem == "" && err != nil:
			t.Errorf("%q: %v", c.body, err)
		case c.problem == "" && cfg.Queue.EventsMaxAge != c.maxAge:
			t.Errorf("%q: events_max_age %s, want %s", c.body, cfg.Queue.EventsMaxAge, c.maxAge)
		case c.problem != "" && (err == nil || !strings.Contains(err.Error(), c.problem)):
			t.Errorf("%q: %v, want an error saying %q", c.body, err, c.problem)
		}
	}
	def := Defaults()
	if def.Snapshots.Interval != time.Hour || def.Snapshots.Keep != 3 || def.Queue.EventsMaxAge != DefaultEventsMaxAge {
		t.Errorf("defaults: snapshots %+v, events_max_age %s", def.Snapshots, def.Queue.EventsMaxAge)
	}
	cfg, err := Load("../configs/viaduct.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Snapshots != def.Snapshots || cfg.Queue.EventsMaxAge != def.Queue.EventsMaxAge {
		t.Errorf("configs/viaduct.yaml: snapshots %+v, events_max_age %s; the defaults are %+v, %s", cfg.Snapshots, cfg.Queue.EventsMaxAge, def.Snapshots, def.Queue.EventsMaxAge)
	}
}
