package harvester

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/viaduct-mirror/viaduct/sim"
)

func TestConfigValidation(t *testing.T) {
	bad := func(s string) *string { return &s }
	cases := []struct {
		name    string
		sources []SourceConfig
		want    string
	}{
		{"no name", []SourceConfig{{URL: "http://a.example"}}, "sources[0].name: required"},
		{"duplicate", []SourceConfig{{Name: "a", URL: "http://a.example"}, {Name: "a", URL: "http://b.example"}}, "sources[1].name"},
		{"no url", []SourceConfig{{Name: "a"}}, "sources[0].url"},
		{"ftp url", []SourceConfig{{Name: "a", URL: "ftp://a.example"}}, "sources[0].url"},
		{"schedule", []SourceConfig{{Name: "a", URL: "http://a.example"}, {Name: "b", URL: "http://b.example"}, {Name: "c", URL: "http://c.example", Schedule: "every so often"}}, "sources[2].schedule"},
		{"baseline", []SourceConfig{{Name: "a", URL: "http://a.example", BaselineSchedule: bad("@fortnightly")}}, "sources[0].baseline_schedule"},
		{"authority", []SourceConfig{{Name: "a", URL: "http://a.example", Authorities: []string{"gopher://x"}}}, "sources[0].authorities[0]"},
	}
	cfg := Defaults()
	for _, c := range cases {
		err := cfg.ValidateSources(c.sources)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %s", c.name, err, c.want)
		}
	}
	cfg.Schedule = "nope"
	if err := cfg.Validate(); err == nil || !strings.HasPrefix(err.Error(), "schedule:") {
		t.Errorf("bad default schedule: %v", err)
	}
	cfg = Defaults()
	cfg.Concurrency = 0
	if err := cfg.Validate(); err == nil || !strings.HasPrefix(err.Error(), "concurrency:") {
		t.Errorf("zero concurrency: %v", err)
	}
}

// TestSourceDefaults reads Sources as an operator writes them and checks
// the defaults each inherits.
func TestSourceDefaults(t *testing.T) {
	var doc struct {
		Sources []SourceConfig `yaml:"sources"`
	}
	in := `
sources:
  - name: plain
    url: https://a.example/.well-known/resourcesync
  - name: tuned
    url: https://b.example/capabilitylist.xml
    collection: bee
    schedule: "*/30 * * * * *"
    baseline_schedule: ""
    delete_missing: false
    authorities: [https://mirror.b.example]
`
	if err := yaml.Unmarshal([]byte(in), &doc); err != nil {
		t.Fatal(err)
	}
	cfg := Defaults()
	if err := cfg.ValidateSources(doc.Sources); err != nil {
		t.Fatal(err)
	}
	p, err := cfg.resolve(doc.Sources[0])
	if err != nil {
		t.Fatal(err)
	}
	if p.Collection != "plain" || p.Schedule != "@every 5m" || p.baseline == nil || !p.deleteMissing || p.loopback || p.private {
		t.Fatalf("defaults not applied: %+v", p)
	}
	q, err := cfg.resolve(doc.Sources[1])
	if err != nil {
		t.Fatal(err)
	}
	if q.Collection != "bee" || q.baseline != nil || q.deleteMissing {
		t.Fatalf("settings not kept: %+v", q)
	}
	next := q.schedule.Next(time.Date(2024, 1, 1, 0, 0, 1, 0, time.UTC))
	if !next.Equal(time.Date(2024, 1, 1, 0, 0, 30, 0, time.UTC)) {
		t.Fatalf("seconds field not honoured: next %s", next)
	}
}

// TestRunPollsOnSchedule runs the cron loop until the Source is harvested.
func TestRunPollsOnSchedule(t *testing.T) {
	e := newEnv(t)
	srv := startSim(t, sim.Config{Resources: 25, Seed: 8})
	sc := simSource("s", srv)
	sc.Schedule = "@every 1s"
	h, _ := e.harvester(Defaults(), sc)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	eventually(t, 15*time.Second, "a pass after Run", func() bool { return counter(t, h, "passes", "s", "ok") >= 1 })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := e.drain(); len(got) != 25 {
		t.Fatalf("Run queued %d changes, want 25", len(got))
	}
}
