package queue_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
)

// TestPublishEventAsyncStoresEveryPublish: events carry no
// de-duplication id, so the same event sent again is stored again, in
// order, for the catalog to absorb (docs/design.md); no id is kept for it.
func TestPublishEventAsyncStoresEveryPublish(t *testing.T) {
	q := queuetest.Start(t)
	ctx := context.Background()
	var pending []*queue.PendingEvent
	for _, i := range []int{1, 2, 1} {
		p, err := q.PublishEventAsync(ctx, testEvent(i))
		if err != nil {
			t.Fatal(err)
		}
		pending = append(pending, p)
	}
	var seqs []uint64
	for _, p := range pending {
		seq, err := p.Wait(ctx)
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, seq)
	}
	eachStored(t, q, seqs)
}

// TestChangeStreamServesManyWorkers takes changes from one stream in
// several goroutines at once: each change is handed out exactly once.
func TestChangeStreamServesManyWorkers(t *testing.T) {
	q := queuetest.Start(t)
	ctx := ctxTimeout(t, 30*time.Second)
	const total = 100
	for i := range total {
		if err := q.PublishChange(ctx, testChange(i)); err != nil {
			t.Fatal(err)
		}
	}
	s, err := q.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	takeCtx, stop := context.WithCancel(ctx)
	defer stop()
	var (
		mu   sync.Mutex
		seen = map[string]int{}
		wg   sync.WaitGroup
	)
	for range 8 {
		wg.Go(func() {
			for {
				m, err := s.Next(takeCtx)
				if takeCtx.Err() != nil {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				if err := m.Ack(ctx); err != nil {
					t.Error(err)
				}
				mu.Lock()
				seen[m.Change.URI]++
				if len(seen) == total {
					stop()
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for uri, n := range seen {
		if n != 1 {
			t.Errorf("%s handed out %d times", uri, n)
		}
	}
	if len(seen) != total {
		t.Fatalf("%d changes handed out, want %d", len(seen), total)
	}
	s.Release()
}
