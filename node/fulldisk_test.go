package node

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/sim"
)

// TestFullDataDirResumes: the node's whole data directory (JetStream
// store, catalog, blobs) on a 24 MB file system that a Source of about
// 30 MB fills mid-ingest; the Source changes again while the disk is
// full, so that the harvester's publishes fail in the JetStream store
// too. While the disk is full the node says it is not ready and why.
// Once the file system is grown, without a restart, every resource is in
// the catalog with its blob and hashes, nothing is dead-lettered, and the
// node is ready again, and it copies another Source. The fetch workers'
// retries back off for ten minutes, far longer than the test waits: a
// change parked by the full disk is stored once the disk is grown because
// the store's gate (fetch/gate.go) releases it, within seconds, not
// because its backoff ran out.
func TestFullDataDirResumes(t *testing.T) {
	disk := testutil.SmallDisk(t, "24m")
	shape := sim.Config{Resources: 300, MinSize: 8 << 10, MaxSize: 16 << 10}
	before, after := shape, shape
	before.Seed, after.Seed = 1, 2
	a, c := startSource(t, before), startSource(t, after)
	// The big Source starts empty and is polled every 2s: its changes
	// come when the test makes them, and a pass that failed on the full
	// disk is followed by another without anyone asking.
	big := startSource(t, sim.Config{Seed: 14, MinSize: 32 << 10, MaxSize: 64 << 10})
	sc := sourceConfig("s", big)
	sc.Schedule = "@every 2s"
	cfg := testConfig(disk, sourceConfig("a", a), sourceConfig("c", c), sc)
	cfg.Queue.MaxDeliver = 1000
	cfg.Queue.PublishTimeout = 2 * time.Second
	cfg.Fetch.RetryBase = 10 * time.Minute
	cfg.Fetch.RetryMax = 10 * time.Minute
	var logs logBuffer
	n := startNode(t, cfg, logs.logger())
	t.Cleanup(func() {
		if t.Failed() {
			logErrors(t, &logs)
		}
	})

	mustSync(t, n, "a")
	waitApplying(t, n, "the first Source copied", func() bool { return settled(t, n) })

	big.Create(600)
	waitFor(t, time.Minute, "/readyz to say the node is not ready", func() bool {
		code, _ := adminCall(t, "GET", n.AdminURL()+"/readyz", "")
		return code == 503
	})
	// The disk is now filled to the last byte, and the Source changes
	// meanwhile: its next pass cannot queue the changes.
	testutil.FillDisk(t, disk)
	big.Create(50)
	var body string
	waitFor(t, time.Minute, "/readyz to say JetStream cannot write its store", func() bool {
		var code int
		code, body = adminCall(t, "GET", n.AdminURL()+"/readyz", "")
		return code == 503 && strings.Contains(body, `"name":"nats store","ready":false`) && strings.Contains(body, "no space left on device")
	})
	t.Logf("full: applied %d; /readyz: %.600s", lastApplied(t, n), body)

	testutil.GrowDisk(t, disk, "512m")
	grown := time.Now()
	waitFor(t, 2*time.Minute, "every change handled once the disk is grown", func() bool {
		held, _, err := n.Catalog().CountResources(context.Background(), "s")
		return err == nil && held == 650 && settledNow(t, n)
	})
	waitFor(t, time.Minute, "/readyz to answer ready", func() bool {
		code, _ := adminCall(t, "GET", n.AdminURL()+"/readyz", "")
		return code == 200
	})
	t.Logf("resumed %s after the disk was grown", time.Since(grown).Round(time.Millisecond))
	checkMirror(t, n, "a", a)
	checkMirror(t, n, "s", big)
	checkBlobs(t, n)
	if d := deadLetters(t, n); len(d) != 0 {
		t.Errorf("%d dead letters, first: %s", len(d), d[0].Reason)
	}

	mustSync(t, n, "c")
	waitApplying(t, n, "a Source copied after the fault", func() bool { return settled(t, n) })
	checkMirror(t, n, "c", c)
}

// logErrors logs each distinct error and warning the node logged.
func logErrors(t *testing.T, logs *logBuffer) {
	seen := map[string]bool{}
	for _, r := range logs.records(nil) {
		if r["level"] != "ERROR" && r["level"] != "WARN" {
			continue
		}
		k := fmt.Sprint(r["role"], " ", r["msg"], " ", r["err"])
		if !seen[k] {
			seen[k] = true
			t.Logf("log: %s %.400s", r["time"], k)
		}
	}
}
