package queue_test

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
)

func TestPublishChangeTwiceQueuesOnce(t *testing.T) {
	reg := prometheus.NewRegistry()
	q := queuetest.Start(t, func(c *queue.Config) { c.Registerer = reg })
	ctx := context.Background()
	for range 2 {
		if err := q.PublishChange(ctx, testChange(1)); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.PublishChange(ctx, testChange(2)); err != nil {
		t.Fatal(err)
	}
	if n := streamMsgs(t, q, queue.StreamChanges); n != 2 {
		t.Fatalf("CHANGES holds %d messages, want 2 (one per distinct change)", n)
	}
	if got := counter(t, reg, "viaduct_queue_published_total", queue.StreamChanges); got != 2 {
		t.Errorf("published counter = %v, want 2", got)
	}
	if got := counter(t, reg, "viaduct_queue_duplicates_total", queue.StreamChanges); got != 1 {
		t.Errorf("duplicates counter = %v, want 1", got)
	}
}

// TestPublishEventTwiceIsStoredTwice: an event published again (its
// worker crashed between the event and its change's ack) is a message of
// its own, the catalog's to absorb; the sequence goes on one by one.
func TestPublishEventTwiceIsStoredTwice(t *testing.T) {
	q := queuetest.Start(t)
	ctx := context.Background()
	var seqs []uint64
	for _, i := range []int{1, 1, 2} {
		seq, err := q.PublishEvent(ctx, testEvent(i))
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, seq)
	}
	eachStored(t, q, seqs)
	if last, err := q.LastEventSeq(ctx); err != nil || last != seqs[2] {
		t.Fatalf("LastEventSeq = %d, %v; want %d", last, err, seqs[2])
	}
}

// eachStored checks that the events published got the sequences seqs, one
// after another, that EVENTS holds them all, and that none carries a
// de-duplication id, which the server would hold in memory for the
// duplicate window.
func eachStored(t *testing.T, q *queue.Queue, seqs []uint64) {
	t.Helper()
	for i := 1; i < len(seqs); i++ {
		if seqs[i] != seqs[i-1]+1 {
			t.Fatalf("sequences %v, want one after another", seqs)
		}
	}
	if n := streamMsgs(t, q, queue.StreamEvents); n != uint64(len(seqs)) {
		t.Fatalf("EVENTS holds %d messages, want %d", n, len(seqs))
	}
	ctx := context.Background()
	s, err := q.JetStream().Stream(ctx, queue.StreamEvents)
	if err != nil {
		t.Fatal(err)
	}
	for _, seq := range seqs {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			t.Fatalf("event %d: %v", seq, err)
		}
		if id := m.Header.Get(jetstream.MsgIDHeader); id != "" {
			t.Errorf("event %d carries the id %q", seq, id)
		}
	}
}

// counter reads a counter's value for one stream label from reg.
func counter(t *testing.T, reg *prometheus.Registry, name, stream string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "stream" && l.GetValue() == stream {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
