package queue_test

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
)

func open(t *testing.T, cfg queue.Config) *queue.Queue {
	t.Helper()
	q, err := queue.Open(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return q
}

func created(t *testing.T, q *queue.Queue, stream string) time.Time {
	t.Helper()
	s, err := q.JetStream().Stream(context.Background(), stream)
	if err != nil {
		t.Fatal(err)
	}
	return s.CachedInfo().Created
}

// Closing the embedded server and opening it again on the same directory
// loses nothing: unacked changes come back, events keep their sequences,
// de-duplication still holds, and the streams are the same streams.
func TestReopenKeepsEverything(t *testing.T) {
	cfg := queuetest.Config(t)
	cfg.AckWait = 300 * time.Millisecond
	ctx := context.Background()

	q := open(t, cfg)
	for i := range 3 {
		if err := q.PublishChange(ctx, testChange(i)); err != nil {
			t.Fatal(err)
		}
	}
	seqs := publishEvents(t, q, 5)
	before := readEvents(t, q, 1)
	s, err := q.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	held := next(t, s) // taken, never acked: the worker "crashes"
	done := next(t, s)
	if err := done.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	createdBefore := map[string]time.Time{}
	for _, name := range []string{queue.StreamChanges, queue.StreamEvents, queue.StreamDead} {
		createdBefore[name] = created(t, q, name)
	}
	if err := q.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}

	q = open(t, cfg)
	defer q.Close()
	for name, c := range createdBefore {
		if got := created(t, q, name); !got.Equal(c) {
			t.Errorf("stream %s created %s, was %s: recreated", name, got, c)
		}
	}
	if n := streamMsgs(t, q, queue.StreamChanges); n != 2 {
		t.Fatalf("CHANGES holds %d after restart, want 2 (the unacked ones)", n)
	}
	s, err = q.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for range 2 {
		m := next(t, s)
		got[m.Change.URI] = true
		if m.Change.URI == held.Change.URI && m.Delivered < 2 {
			t.Errorf("held change redelivered with Delivered=%d, want >= 2", m.Delivered)
		}
		if err := m.Ack(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if !got[held.Change.URI] || got[done.Change.URI] {
		t.Errorf("after restart got %v: want the held change %s and not the acked %s", got, held.Change.URI, done.Change.URI)
	}

	after := readEvents(t, q, 1)
	if len(after) != len(before) {
		t.Fatalf("%d events after restart, %d before", len(after), len(before))
	}
	for i := range before {
		if after[i].seq != before[i].seq || after[i].uri != before[i].uri || !after[i].at.Equal(before[i].at) {
			t.Errorf("event %d: %+v after restart, %+v before", i, after[i], before[i])
		}
	}
	next, err := q.PublishEvent(ctx, testEvent(4))
	if err != nil || next != seqs[4]+1 {
		t.Errorf("an event after restart: seq %d, %v; want %d, after the last", next, err, seqs[4]+1)
	}
	// A change already processed, read again within the duplicate
	// window (a re-polled Change List), is not queued a second time.
	testutil.AcksTaken(t, q.JetStream(), queue.StreamChanges)
	if err := q.PublishChange(ctx, testChange(0)); err != nil {
		t.Fatal(err)
	}
	if n := streamMsgs(t, q, queue.StreamChanges); n != 0 {
		t.Errorf("CHANGES holds %d after republishing a processed change, want 0", n)
	}
}

// A data directory whose CHANGES consumer was made with JetStream's
// default pending window of 1,000 messages (before max_ack_pending was a
// setting) gets the configured window when the embedded server opens it
// again, with the changes it holds.
func TestReopenWidensThePendingWindow(t *testing.T) {
	cfg := queuetest.Config(t)
	cfg.MaxAckPending = 1000
	ctx := context.Background()
	q := open(t, cfg)
	if err := q.PublishChange(ctx, testChange(0)); err != nil {
		t.Fatal(err)
	}
	q.Close()

	cfg.MaxAckPending = queue.Defaults().MaxAckPending
	q = open(t, cfg)
	defer q.Close()
	cons, err := q.JetStream().Consumer(ctx, queue.StreamChanges, cfg.Consumer)
	if err != nil {
		t.Fatal(err)
	}
	if got := cons.CachedInfo().Config.MaxAckPending; got != cfg.MaxAckPending {
		t.Fatalf("the CHANGES consumer's pending window after reopening: %d, want %d", got, cfg.MaxAckPending)
	}
	s, err := q.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m := next(t, s); m.Change.URI != testChange(0).URI {
		t.Fatalf("the change queued before reopening came back as %s", m.Change.URI)
	}
}

// EVENTS made before compression was the default gets it on the next
// start, and from the start after that its full message blocks are
// compressed on disk: the store takes much less room than the events it
// holds, and every event reads back as published after a restart, the
// compressed blocks included.
func TestEventsBlocksCompressed(t *testing.T) {
	cfg := queuetest.Config(t)
	cfg.EventsCompression = "none"
	ctx := context.Background()
	q := open(t, cfg)
	publishEvents(t, q, 1)
	q.Close()

	cfg.EventsCompression = queue.Defaults().EventsCompression
	q = open(t, cfg)
	s, err := q.JetStream().Stream(ctx, queue.StreamEvents)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.CachedInfo().Config.Compression; got != jetstream.S2Compression {
		t.Fatalf("EVENTS reopened with compression %s, want s2", got)
	}
	q.Close()

	// Events of about 4 KB, whose URIs repeat a long path as a
	// repository's do, in all about 2.5 blocks of 8 MB.
	q = open(t, cfg)
	if s, err = q.JetStream().Stream(ctx, queue.StreamEvents); err != nil {
		t.Fatal(err)
	}
	const n = 5000
	path := strings.Repeat("collection/item/bitstream/", 150)
	evs := make([]*viaduct.Event, 0, n-1)
	for i := 1; i < n; i++ {
		ev := testEvent(i)
		ev.URI = ev.URI + "/" + path + strconv.Itoa(i)
		ev.Upstream.URI = ev.URI
		evs = append(evs, ev)
	}
	queuetest.PublishEvents(t, q, evs)
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	logical := info.State.Bytes
	q.Close()

	onDisk, blocks := eventsOnDisk(t, cfg.Dir)
	if blocks < 3 || onDisk*2 > int64(logical) {
		t.Fatalf("EVENTS holds %d bytes of events in %d blocks taking %d bytes on disk: want 3 blocks or more, at most half the bytes", logical, blocks, onDisk)
	}

	q = open(t, cfg)
	defer q.Close()
	got := readEvents(t, q, 1)
	if len(got) != n {
		t.Fatalf("read back %d events after a restart, want %d", len(got), n)
	}
	for i, a := range got {
		want := testEvent(i).URI
		if i > 0 {
			want += "/" + path + strconv.Itoa(i)
		}
		if a.uri != want {
			t.Fatalf("event %d read back with URI %.80q..., want %.80q...", i, a.uri, want)
		}
	}
}
