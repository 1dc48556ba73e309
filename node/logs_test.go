package node

import (
	"regexp"
	"testing"

	"github.com/viaduct-mirror/viaduct/sim"
)

// TestStartAndStopAreLogged: an operator learns from the log where the
// embedded NATS server listens (its port is random by default) and which
// version it runs, and sees the node stop.
func TestStartAndStopAreLogged(t *testing.T) {
	var logs logBuffer
	cfg := testConfig(t.TempDir(), sourceConfig("s", startSource(t, sim.Config{Resources: 1, Seed: 51})))
	n := startNode(t, cfg, logs.logger())

	ready := logs.records(map[string]string{"msg": "nats ready"})
	if len(ready) != 1 {
		t.Fatalf("%d \"nats ready\" lines, want 1", len(ready))
	}
	url, _ := ready[0]["url"].(string)
	if !regexp.MustCompile(`^nats://127\.0\.0\.1:[1-9][0-9]*$`).MatchString(url) {
		t.Errorf("nats ready url %q, want the embedded server's real client URL", url)
	}
	if v, _ := ready[0]["server_version"].(string); v == "" {
		t.Errorf("nats ready without server_version: %v", ready[0])
	}
	if got := n.Queue().ClientURL(); got != url {
		t.Errorf("logged %s, the queue's client URL is %s", url, got)
	}

	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if len(logs.records(map[string]string{"msg": "viaduct node stopped"})) != 1 {
		t.Error("no \"viaduct node stopped\" line")
	}
}
