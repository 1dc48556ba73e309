package node

import (
	"context"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/storage/sqlite"
)

// TestBatchWait: a small batch is written applyBatchDelay after its first
// event, one that gathers a stream waits until applyBatchMaxDelay, or
// until the stream has paused for applyBatchDelay.
func TestBatchWait(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	bound := t0.Add(applyBatchMaxDelay)
	for _, c := range []struct {
		name      string
		now, last time.Time
		n         int
		want      time.Duration
	}{
		{"a lone event, at the delay", ms(20), t0, 1, 0},
		{"a lone event, early", ms(12), t0, 1, 8 * time.Millisecond},
		{"a few pushes, at the delay", ms(20), ms(19), applyStreamBatch - 1, 0},
		{"a stream, at the delay", ms(20), ms(20), applyStreamBatch, 20 * time.Millisecond},
		{"a stream, a moment after its latest event", ms(300), ms(295), 500, 15 * time.Millisecond},
		{"a stream, near the bound", bound.Add(-2 * time.Millisecond), bound.Add(-3 * time.Millisecond), 500, 2 * time.Millisecond},
		{"a stream, at the bound", bound, bound, 500, 0},
		{"a stream, past the bound", bound.Add(30 * time.Millisecond), bound.Add(29 * time.Millisecond), 500, 0},
		{"a stream that paused", ms(300), ms(280), 500, 0},
		{"a stream that paused long ago", ms(300), ms(100), 500, 0},
	} {
		if got := batchWait(c.now, t0, c.last, c.n); got != c.want {
			t.Errorf("%s: batchWait = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestStreamBatchWaitsOutBusyWorkers: a stream's batch that continues the
// one written just before it is not written when its stream pauses while
// CHANGES still holds a change no worker has finished, until it holds
// twice the events of the batch before it or reaches applyBatchMaxDelay;
// a stream's first batch, or any batch once CHANGES is empty, is written
// at the pause.
func TestStreamBatchWaitsOutBusyWorkers(t *testing.T) {
	ctx := context.Background()
	q := queuetest.Start(t)
	const never = time.Duration(0)
	for _, c := range []struct {
		name   string
		busy   bool          // CHANGES holds a change
		n      int           // events in the batch
		age    time.Duration // since its first event
		wrote  time.Duration // since the batch before it was written (never: none was)
		wroteN int
		wait   bool
	}{
		{"workers idle", false, 500, time.Second, time.Second, 2500, false},
		{"the stream's first batch", true, 500, time.Second, never, 0, false},
		{"after a batch the stream paused before", true, 500, time.Second, 2 * time.Second, 2500, false},
		{"workers busy", true, 500, time.Second, time.Second, 2500, true},
		{"workers busy, twice the batch before", true, 500, time.Second, time.Second, 250, false},
		{"workers busy, at the bound", true, 500, applyBatchMaxDelay, applyBatchMaxDelay, 2500, false},
		{"workers busy, a few pushes", true, applyStreamBatch - 1, time.Second, time.Second, 2500, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if n, _ := q.Backlog(ctx); c.busy && n == 0 {
				ch := &viaduct.Change{Source: "s", Collection: "s", URI: "http://example.org/r", Op: resourcesync.Created, Time: time.Now()}
				if err := q.PublishChange(ctx, ch); err != nil {
					t.Fatal(err)
				}
			}
			if n, err := q.Backlog(ctx); err != nil || (n > 0) != c.busy {
				t.Fatalf("CHANGES holds %d changes (%v), want busy=%v", n, err, c.busy)
			}
			// The stream paused twice applyBatchDelay ago.
			now := time.Now()
			a := &applier{q: q, batch: make([]sqlite.Applied, c.n), wroteN: c.wroteN,
				first: now.Add(-c.age), last: now.Add(-2 * applyBatchDelay)}
			if c.wrote != never {
				a.wrote = now.Add(-c.wrote)
			}
			a.mu.Lock()
			wait, ok := a.due(ctx)
			a.mu.Unlock()
			if !ok {
				t.Fatal("due: the batch is gone")
			}
			if (wait > 0) != c.wait {
				t.Errorf("due = %v, want waiting: %v", wait, c.wait)
			}
		})
	}
}
