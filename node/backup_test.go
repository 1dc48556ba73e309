package node

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/backup"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/sim"
)

// TestBackupRestoreMidIngest backs a node up through its admin listener
// while it is copying a baseline, lets it go on and then loses it; the
// backup restored on a new data directory (the blob store kept, as S3 or
// a disk of its own would be) resumes at the sequence the backup recorded
// and ends equal to the Source, which changed meanwhile, with every
// change logged once.
func TestBackupRestoreMidIngest(t *testing.T) {
	ctx := context.Background()
	src := startSource(t, sim.Config{Resources: restartSize, Seed: 21, MinSize: 16, MaxSize: 512})
	release := holdBitstreamsAfter(t, src, 400)
	cfg := testConfig(t.TempDir(), sourceConfig("s", src))
	n := startNode(t, cfg, nil)
	mustSync(t, n, "s")
	waitFor(t, 30*time.Second, "part of the baseline to be applied", func() bool { return lastApplied(t, n) >= 300 })

	dir := filepath.Join(t.TempDir(), "backup")
	m, err := backup.Fetch(ctx, n.AdminURL(), "", dir)
	if err != nil {
		t.Fatalf("backup: %v", err)
	}
	if m.CatalogApplied < 300 || m.CatalogApplied >= restartSize || m.EventsLastSeq < m.CatalogApplied {
		t.Fatalf("backup of catalog at %d, EVENTS at %d: want the middle of a baseline of %d", m.CatalogApplied, m.EventsLastSeq, restartSize)
	}
	var names []string
	for _, s := range m.Streams {
		names = append(names, s.Stream)
	}
	for _, want := range []string{queue.StreamChanges, queue.StreamEvents, "KV_" + queue.BucketPositions} {
		if !strings.Contains(" "+strings.Join(names, " ")+" ", " "+want+" ") {
			t.Errorf("backup streams %v lack %s", names, want)
		}
	}

	// The node goes on, the Source changes, then the node is lost.
	release()
	waitSettled(t, n, 60*time.Second)
	src.Create(50)
	src.Update(50)
	src.Delete(20)
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}

	if _, err := backup.Restore(ctx, RestoreTarget(cfg), dir, nil); !errors.Is(err, backup.ErrNotEmpty) {
		t.Fatalf("restore into the lost node's own data directory: %v, want backup.ErrNotEmpty", err)
	}

	cfg2 := testConfig(t.TempDir(), sourceConfig("s", src))
	cfg2.Queue.MaxStore = 2 << 30 // room beyond the hub outbox's reservation, for a stream a restore left out
	cfg2.Fill()
	cfg2.Blobs.Dir = n.cfg.Blobs.Dir
	if _, err := backup.Restore(ctx, RestoreTarget(cfg2), dir, nil); err != nil {
		t.Fatalf("restore: %v", err)
	}
	n2 := startNode(t, cfg2, nil)
	if got := lastApplied(t, n2); got < m.CatalogApplied {
		t.Fatalf("restored catalog at %d, the backup's was at %d", got, m.CatalogApplied)
	}
	if last, err := n2.Queue().LastEventSeq(ctx); err != nil || last < m.EventsLastSeq {
		t.Fatalf("restored EVENTS ends at %d (%v), the backup's at %d", last, err, m.EventsLastSeq)
	}
	// What the backup had queued is handled first, as after a restart
	// (TestRestartDuringChanges), then a pass reads what changed since.
	waitSettled(t, n2, 60*time.Second)
	mustSync(t, n2, "s")
	waitSettled(t, n2, 60*time.Second)
	checkMirror(t, n2, "s", src)
	checkBlobs(t, n2)
	live := 0
	for _, it := range src.Snapshot() {
		if !it.Deleted {
			live++
		}
	}
	if got := checkChangeLog(t, n2, "s"); got > restartSize+50+50+20 || got < live {
		t.Errorf("change log has %d entries for %d resources created, 50 updated, 20 deleted", got, restartSize+50)
	}
}
