package queue_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
)

// A stream snapshot restored into a new store gives back every stream and
// bucket as it was: events with their sequences and times, unacked
// changes, harvest positions.
func TestSnapshotRestoresEverything(t *testing.T) {
	ctx := context.Background()
	q := open(t, queuetest.Config(t))
	defer q.Close()
	for i := range 3 {
		if err := q.PublishChange(ctx, testChange(i)); err != nil {
			t.Fatal(err)
		}
	}
	seqs := publishEvents(t, q, 5)
	if _, err := q.Bucket(ctx, queue.BucketLeases); err != nil {
		t.Fatal(err)
	}
	pos, err := q.ClaimPosition(ctx, "example.org repo")
	if err != nil {
		t.Fatal(err)
	}
	if err := pos.Set(ctx, "until", "2024-05-01T12:00:00Z"); err != nil {
		t.Fatal(err)
	}
	before := readEvents(t, q, 1)

	names, err := q.BackupStreams(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if i, j := slices.Index(names, "KV_"+queue.BucketPositions), slices.Index(names, queue.StreamChanges); i < 0 || j < i || names[len(names)-1] != queue.StreamEvents {
		t.Fatalf("streams in backup order: %v; want the buckets before CHANGES and EVENTS last", names)
	}
	if slices.Contains(names, "KV_"+queue.BucketLeases) {
		t.Fatalf("streams in backup order: %v; want no leases, which name a process that a restore does not bring back", names)
	}
	archives := map[string]*bytes.Buffer{}
	var snaps []queue.StreamSnapshot
	for _, name := range names {
		var b bytes.Buffer
		s, err := q.SnapshotStream(ctx, name, &b)
		if err != nil {
			t.Fatal(err)
		}
		if s.Bytes != int64(b.Len()) || s.Bytes == 0 {
			t.Fatalf("snapshot of %s says %d bytes, wrote %d", name, s.Bytes, b.Len())
		}
		archives[name] = &b
		snaps = append(snaps, s)
	}

	cfg := queuetest.Config(t)
	err = queue.RestoreStreams(ctx, cfg, slog.New(slog.DiscardHandler), snaps, func(s queue.StreamSnapshot) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(archives[s.Stream].Bytes())), nil
	})
	if err != nil {
		t.Fatalf("restore: %v", err)
	}
	r := open(t, cfg)
	defer r.Close()
	after := readEvents(t, r, 1)
	if len(after) != len(before) {
		t.Fatalf("%d events restored, %d backed up", len(after), len(before))
	}
	for i := range before {
		if after[i].seq != before[i].seq || after[i].uri != before[i].uri || !after[i].at.Equal(before[i].at) {
			t.Errorf("event %d: %+v restored, %+v backed up", i, after[i], before[i])
		}
	}
	if n := streamMsgs(t, r, queue.StreamChanges); n != 3 {
		t.Errorf("CHANGES holds %d restored, want 3", n)
	}
	got, err := r.ReadPosition(ctx, "example.org repo")
	if err != nil || got["until"] != "2024-05-01T12:00:00Z" {
		t.Errorf("position restored: %v, %v", got, err)
	}
	again, err := r.PublishEvent(ctx, testEvent(5))
	if err != nil || again != seqs[4]+1 {
		t.Errorf("next event after restore: seq %d, %v; want %d", again, err, seqs[4]+1)
	}
}

// A snapshot that cannot be restored whole says which stream and why.
func TestRestoreOfTruncatedArchiveFails(t *testing.T) {
	ctx := context.Background()
	q := open(t, queuetest.Config(t))
	defer q.Close()
	publishEvents(t, q, 5)
	var b bytes.Buffer
	s, err := q.SnapshotStream(ctx, queue.StreamEvents, &b)
	if err != nil {
		t.Fatal(err)
	}
	err = queue.RestoreStreams(ctx, queuetest.Config(t), nil, []queue.StreamSnapshot{s}, func(queue.StreamSnapshot) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b.Bytes()[:b.Len()/2])), nil
	})
	if err == nil || !strings.Contains(err.Error(), "restore stream EVENTS") {
		t.Fatalf("restore of half an archive: %v, want an error naming EVENTS", err)
	}
}
