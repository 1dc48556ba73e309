package fetch

import (
	"path/filepath"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/sim"
	"github.com/viaduct-mirror/viaduct/storage/dir"
)

// TestFullDataDirDelaysWorkers: with the data directory full (the
// JetStream store and the blobs on it, or the JetStream store alone), the
// workers' writes and publishes fail and are retried with backoff:
// nothing waits for ever. With the blobs on the full disk, once it is
// grown every change is stored and published, none dead-lettered. With
// only the JetStream store full, each publish fails after
// queue.publish_timeout and is retried; the queue restarts JetStream once
// its store can be written again (queue.TestStoreFullThenGrown,
// node.TestFullDataDirResumes), so that case stops at showing the workers
// do not freeze.
func TestFullDataDirDelaysWorkers(t *testing.T) {
	for _, blobsOnDisk := range []bool{true, false} {
		name := map[bool]string{true: "store_and_blobs", false: "store_only"}[blobsOnDisk]
		t.Run(name, func(t *testing.T) { fullDisk(t, blobsOnDisk) })
	}
}

func fullDisk(t *testing.T, blobsOnDisk bool) {
	disk := testutil.SmallDisk(t, "24m")
	srv := startSim(t, sim.Config{Resources: 20, MinSize: 20 << 10, MaxSize: 40 << 10})
	q := startQueue(t, func(c *queue.Config) {
		c.Dir = filepath.Join(disk, "jetstream")
		c.MaxStore = 16 << 20
		c.MaxDeliver = 1000
		c.Backoff = nil
		c.AckWait = 5 * time.Second
		c.PublishTimeout = time.Second
	})
	blobDir := t.TempDir()
	if blobsOnDisk {
		blobDir = filepath.Join(disk, "blobs")
	}
	store, err := dir.New(blobDir)
	if err != nil {
		t.Fatal(err)
	}
	publishAll(t, q, simChanges(t, srv))
	testutil.FillDisk(t, disk)

	cfg := testConfig()
	cfg.RetryBase = 50 * time.Millisecond
	cfg.RetryMax = 200 * time.Millisecond
	p, _ := runPool(t, cfg, queueDeps(t, q, store, clientsFor(t, srv)), nil)
	reason := map[bool]string{true: "store", false: "publish"}[blobsOnDisk]
	eventually(t, 60*time.Second, "workers failing on the full disk and retrying", func() bool {
		return retried(t, p, reason) >= 3
	})
	t.Logf("before growing: %d events, retried %v times (%s)", len(events(t, q)), retried(t, p, reason), reason)
	if !blobsOnDisk {
		before := retried(t, p, reason)
		eventually(t, 30*time.Second, "publishes still timing out and retried, not waiting for ever", func() bool {
			return retried(t, p, reason) >= before+3
		})
		return
	}
	testutil.GrowDisk(t, disk, "256m")
	eventually(t, 60*time.Second, "every change stored once the disk is grown", func() bool {
		return len(events(t, q)) == 20 && streamMsgs(t, q, queue.StreamChanges) == 0
	})
	if d := deadLetters(t, q); len(d) != 0 {
		t.Errorf("dead letters: %v", d)
	}
}

// retried reads the pool's retried_total for the test Source and reason.
func retried(t *testing.T, p *Pool, reason string) float64 {
	t.Helper()
	var m dto.Metric
	if err := p.m.retried.WithLabelValues(testSource, reason).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
