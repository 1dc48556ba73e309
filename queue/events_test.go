package queue_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
)

// applied is what an applier saw of one event.
type applied struct {
	seq uint64
	at  time.Time
	uri string
}

// readEvents runs Events from fromSeq until the applier has seen the
// stream's last sequence.
func readEvents(t *testing.T, q *queue.Queue, fromSeq uint64) []applied {
	t.Helper()
	last, err := q.LastEventSeq(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got []applied
	err = q.Events(ctx, fromSeq, func(_ context.Context, seq uint64, at time.Time, ev *viaduct.Event) error {
		got = append(got, applied{seq, at, ev.URI})
		if seq >= last {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Events returned %v, want context.Canceled once caught up", err)
	}
	return got
}

func publishEvents(t *testing.T, q *queue.Queue, n int) []uint64 {
	t.Helper()
	seqs := make([]uint64, n)
	for i := range n {
		seq, err := q.PublishEvent(context.Background(), testEvent(i))
		if err != nil {
			t.Fatal(err)
		}
		seqs[i] = seq
	}
	return seqs
}

func TestEventsReplayInOrder(t *testing.T) {
	q := queuetest.Start(t)
	const n = 10
	seqs := publishEvents(t, q, n)
	for _, tc := range []struct {
		name  string
		from  uint64
		first int
	}{{"from start", 1, 0}, {"from middle", seqs[6], 6}} {
		t.Run(tc.name, func(t *testing.T) {
			got := readEvents(t, q, tc.from)
			if len(got) != n-tc.first {
				t.Fatalf("got %d events, want %d", len(got), n-tc.first)
			}
			for i, a := range got {
				want := testEvent(tc.first + i)
				if a.seq != seqs[tc.first+i] || a.uri != want.URI {
					t.Errorf("event %d: seq %d uri %s, want seq %d uri %s", i, a.seq, a.uri, seqs[tc.first+i], want.URI)
				}
				if i > 0 && !a.at.After(got[i-1].at) {
					t.Errorf("event %d at %s, not after %s", a.seq, a.at, got[i-1].at)
				}
			}
		})
	}
}

func TestEventsFollowsNewEventsAndStopsOnError(t *testing.T) {
	q := queuetest.Start(t)
	publishEvents(t, q, 2)
	boom := errors.New("catalog full")
	ctx := ctxTimeout(t, 10*time.Second)
	done := make(chan error, 1)
	seen := make(chan uint64, 10)
	go func() {
		done <- q.Events(ctx, 1, func(_ context.Context, seq uint64, _ time.Time, _ *viaduct.Event) error {
			seen <- seq
			if seq == 3 {
				return boom
			}
			return nil
		})
	}()
	for _, want := range []uint64{1, 2} {
		if got := <-seen; got != want {
			t.Fatalf("got seq %d, want %d", got, want)
		}
	}
	// Published while the applier waits: delivered without a restart.
	if _, err := q.PublishEvent(context.Background(), testEvent(2)); err != nil {
		t.Fatal(err)
	}
	if got := <-seen; got != 3 {
		t.Fatalf("got seq %d, want 3", got)
	}
	if err := <-done; !errors.Is(err, boom) {
		t.Fatalf("Events returned %v, want the applier's error", err)
	}
}

func TestEventsReportsAGap(t *testing.T) {
	q := queuetest.Start(t)
	publishEvents(t, q, 5)
	s, err := q.JetStream().Stream(context.Background(), queue.StreamEvents)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteMsg(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
	err = q.Events(ctxTimeout(t, 10*time.Second), 1, func(context.Context, uint64, time.Time, *viaduct.Event) error { return nil })
	if !errors.Is(err, queue.ErrEventsGap) {
		t.Fatalf("Events over a removed event returned %v, want ErrEventsGap", err)
	}
	if got := readEvents(t, q, 3); len(got) != 3 || got[0].seq != 3 {
		t.Fatalf("from 3: %+v", got)
	}
}
