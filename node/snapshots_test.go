package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/viaduct-mirror/viaduct/backup"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/sim"
	"github.com/viaduct-mirror/viaduct/storage"
	"github.com/viaduct-mirror/viaduct/storage/s3"
)

// TestClusterJoinFromSnapshot: three nodes on a three-server NATS cluster
// and MinIO copy a Source, one of them writes a catalog snapshot, the
// Source changes, a second snapshot is written, and EVENTS then loses
// every event up to that snapshot's sequence. A fourth node, new, starts
// from the second snapshot (the first is too old), replays only the tail
// of EVENTS and ends equal to the others: the same catalog, the same
// Change Lists. A fifth node, new, refuses to start when the snapshots
// are damaged, and when there are none, naming what is missing, rather
// than serve a partial catalog.
func TestClusterJoinFromSnapshot(t *testing.T) {
	ctx := context.Background()
	src := startSource(t, sim.Config{Resources: 400, Seed: 39, MinSize: 16, MaxSize: 256})
	c := startClusterOf(t, src, 3, func(cfg *Config) {
		useMinIO(t, cfg, "snapshot-join")
		// An hour: the schedule writes nothing during the test; the test
		// asks for each snapshot.
		cfg.Snapshots = backup.Config{Interval: time.Hour, Keep: 2}
	})
	settle := func(what string) {
		t.Helper()
		c.syncAllUntilDone(t, 3*time.Minute)
		waitFor(t, 3*time.Minute, what, func() bool { return c.settled(t) })
	}
	settle("the cluster to copy the baseline")
	first := writeSnapshot(t, c)
	src.Update(30)
	src.Create(20)
	src.Delete(10)
	settle("the cluster to copy the first changes")
	second := writeSnapshot(t, c)
	if second.Seq <= first.Seq {
		t.Fatalf("second snapshot at %d, the first at %d", second.Seq, first.Seq)
	}

	// EVENTS loses every event up to the second snapshot's: the first
	// snapshot can no longer be brought up to date, the second just can.
	q := c.live()[0].Queue()
	stream, err := q.JetStream().Stream(ctx, queue.StreamEvents)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Purge(ctx, jetstream.WithPurgeSequence(second.Seq+1)); err != nil {
		t.Fatalf("purging EVENTS: %v", err)
	}
	src.Update(25)
	src.Create(15)
	src.Delete(5)
	settle("the cluster to copy the tail's changes")
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.FirstSeq != second.Seq+1 || info.State.LastSeq <= second.Seq {
		t.Fatalf("EVENTS holds %d-%d; want it to start after the snapshot's %d and hold a tail", info.State.FirstSeq, info.State.LastSeq, second.Seq)
	}

	cfg := c.cfgs[0]
	cfg.DataDir, cfg.Catalog.Path, cfg.Republish.Cache.Dir = t.TempDir(), "", ""
	cfg.Queue.NodeName = "viaduct-4"
	cfg.Fill()
	c.cfgs, c.nodes, c.logs = append(c.cfgs, cfg), append(c.nodes, nil), append(c.logs, &logBuffer{})
	c.start(t, 3)
	n4 := c.nodes[3]
	if n4.joined.From != "snapshot" || n4.joined.Snapshot.Object != second.Object {
		t.Fatalf("the new node started from %q %s; want the second snapshot, %s", n4.joined.From, n4.joined.Snapshot.Object, second.Object)
	}
	waitFor(t, 3*time.Minute, "the new node to catch up", func() bool { return c.settled(t) })
	if got := lastApplied(t, n4); got != info.State.LastSeq {
		t.Fatalf("the new node applied up to %d, EVENTS ends at %d", got, info.State.LastSeq)
	}
	checkMirror(t, n4, "s", src)
	checkChangeLog(t, n4, "s")
	want := changeListKeys(t, "http://"+c.nodes[0].ln.Addr().String(), "s")
	if got := changeListKeys(t, "http://"+n4.ln.Addr().String(), "s"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the new node lists %d changes, node 1 %d, or in another order", len(got), len(want))
	}

	// The running nodes stop, so that no schedule writes a snapshot
	// while the next starts are tried.
	for _, n := range c.live() {
		n.Close()
	}
	store, err := s3.New(ctx, cfg.Blobs.S3)
	if err != nil {
		t.Fatal(err)
	}
	l, err := backup.ListSnapshots(ctx, store)
	if err != nil || len(l.Snapshots) != 2 || len(l.Orphans) > 0 {
		t.Fatalf("the store holds %d snapshots and %d orphans (%v); want the 2 kept", len(l.Snapshots), len(l.Orphans), err)
	}
	for _, s := range l.Snapshots {
		flipByte(t, store, s.Object)
	}
	refuse := func(what string, wantIn ...string) {
		t.Helper()
		cfg5 := cfg
		cfg5.DataDir, cfg5.Catalog.Path, cfg5.Republish.Cache.Dir = t.TempDir(), "", ""
		cfg5.Queue.NodeName = "viaduct-5"
		cfg5.Fill()
		n, err := Start(ctx, cfg5, Options{Version: "test"})
		if err == nil {
			n.Close()
			t.Fatalf("a new node started with %s", what)
		}
		if !errors.Is(err, backup.ErrCannotJoin) {
			t.Fatalf("a new node with %s: %v; want ErrCannotJoin", what, err)
		}
		for _, w := range wantIn {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("a new node with %s refused with %q, which does not say %q", what, err, w)
			}
		}
		if fileExists(cfg5.Catalog.Path) {
			t.Errorf("a new node with %s left a catalog at %s", what, cfg5.Catalog.Path)
		}
	}
	refuse("damaged snapshots", fmt.Sprintf("EVENTS now starts at sequence %d", second.Seq+1), second.Object, "sha-256", "too old")
	for _, s := range l.Snapshots {
		store.DeleteObject(ctx, s.Object)
		store.DeleteObject(ctx, strings.TrimSuffix(s.Object, ".db.gz")+".json")
	}
	refuse("no snapshot", "holds no catalog snapshot", "restore a backup")
}

// writeSnapshot has a live node write a snapshot, whichever holds the
// lease, and returns it.
func writeSnapshot(t testing.TB, c *testCluster) backup.Snapshot {
	t.Helper()
	var snap backup.Snapshot
	waitFor(t, time.Minute, "a node to write a snapshot", func() bool {
		for _, n := range c.live() {
			s, err := n.snapshots.Write(context.Background())
			if err == nil {
				snap = s
				return true
			}
			t.Logf("%s: %v", n.cfg.Queue.NodeName, err)
		}
		return false
	})
	return snap
}

// flipByte inverts a byte in the middle of the object, behind the
// store's back.
func flipByte(t testing.TB, store storage.Objects, name string) {
	t.Helper()
	ctx := context.Background()
	r, err := store.GetObject(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := store.PutObject(ctx, name, bytes.NewReader(b), int64(len(b))); err != nil {
		t.Fatal(err)
	}
}
