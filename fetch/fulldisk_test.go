package fetch

import (
	"path/filepath"
	"strings"
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
// workers' writes or publishes fail, and the changes are held at the gate
// of the failing store (the pool reports the fault) instead of being
// handed back with a backoff. With the blobs on the full disk, once it is
// grown every change is stored and published, none dead-lettered, though
// the retry backoff is ten minutes: the store's probe, not the backoff,
// takes them up again. With only the JetStream store full, the queue
// restarts JetStream once its store can be written again
// (queue.TestStoreFullThenGrown, node.TestFullDataDirResumes), so that
// case stops at the fault being reported.
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
	// A change handed back with a backoff would not come back within the
	// test: only the gate's probe can take the changes up again.
	cfg.RetryBase = 10 * time.Minute
	cfg.RetryMax = 10 * time.Minute
	p, _ := runPool(t, cfg, queueDeps(t, q, store, clientsFor(t, srv)))
	reason := map[bool]string{true: "store", false: "publish"}[blobsOnDisk]
	fault := map[bool]string{true: "blob store", false: "store of events"}[blobsOnDisk]
	eventually(t, 60*time.Second, "workers failing on the full disk and the pool reporting the "+fault, func() bool {
		err := p.StoreFault()
		return retried(t, p, reason) >= 1 && err != nil && strings.Contains(err.Error(), fault)
	})
	t.Logf("before growing: %d events, %v held (%s): %v", len(events(t, q)), retried(t, p, reason), reason, p.StoreFault())
	if !blobsOnDisk {
		return
	}
	testutil.GrowDisk(t, disk, "256m")
	eventually(t, 60*time.Second, "every change stored once the disk is grown", func() bool {
		return len(events(t, q)) == 20 && streamMsgs(t, q, queue.StreamChanges) == 0
	})
	if err := p.StoreFault(); err != nil {
		t.Errorf("the pool still reports a fault once every change is stored: %v", err)
	}
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
