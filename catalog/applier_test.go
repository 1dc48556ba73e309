package catalog

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// TestBatchWait: a small batch is written applyBatchDelay after its first
// event, one that gathers a stream waits until its bound (applyBatchMaxDelay,
// or applyFirstBatchMaxDelay for a stream's first batch), or until the
// stream has paused for applyBatchDelay.
func TestBatchWait(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	bound := t0.Add(applyBatchMaxDelay)
	firstBound := t0.Add(applyFirstBatchMaxDelay)
	for _, c := range []struct {
		name      string
		now, last time.Time
		n         int
		want      time.Duration
		first     bool // the stream's first batch
	}{
		{"a lone event, at the delay", ms(20), t0, 1, 0, false},
		{"a lone event, early", ms(12), t0, 1, 8 * time.Millisecond, false},
		{"a few pushes, at the delay", ms(20), ms(19), applyStreamBatch - 1, 0, false},
		{"a stream, at the delay", ms(20), ms(20), applyStreamBatch, 20 * time.Millisecond, false},
		{"a stream, a moment after its latest event", ms(300), ms(295), 500, 15 * time.Millisecond, false},
		{"a stream, near the bound", bound.Add(-2 * time.Millisecond), bound.Add(-3 * time.Millisecond), 500, 2 * time.Millisecond, false},
		{"a stream, at the bound", bound, bound, 500, 0, false},
		{"a stream, past the bound", bound.Add(30 * time.Millisecond), bound.Add(29 * time.Millisecond), 500, 0, false},
		{"a stream that paused", ms(300), ms(280), 500, 0, false},
		{"a stream that paused long ago", ms(300), ms(100), 500, 0, false},
		{"a stream's first batch, near its bound", firstBound.Add(-2 * time.Millisecond), firstBound.Add(-3 * time.Millisecond), 500, 2 * time.Millisecond, true},
		{"a stream's first batch, at its bound", firstBound, firstBound, 500, 0, true},
		{"a few pushes beginning a stream, early", ms(12), ms(11), applyStreamBatch - 1, 8 * time.Millisecond, true},
	} {
		maxDelay := applyBatchMaxDelay
		if c.first {
			maxDelay = applyFirstBatchMaxDelay
		}
		if got := batchWait(c.now, t0, c.last, c.n, maxDelay); got != c.want {
			t.Errorf("%s: batchWait = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestBatchWaitsWhileWorkersAreSaturated: a due batch that continues the
// one written just before it is not written while CHANGES holds
// applyStreamBatch changes or more that no worker has taken, until it
// holds twice the events of the batch before it or reaches
// applyBatchMaxDelay; a first batch, or any batch while fewer changes
// wait, is written when due.
func TestBatchWaitsWhileWorkersAreSaturated(t *testing.T) {
	ctx := context.Background()
	q := queuetest.Start(t)
	const never = time.Duration(0)
	for _, c := range []struct {
		name   string
		queued int           // changes on CHANGES, no worker taking them
		n      int           // events in the batch
		age    time.Duration // since its first event
		wrote  time.Duration // since the batch before it was written (never: none was)
		wroteN int
		wait   bool
	}{
		{"nothing queued", 0, 500, time.Second, time.Second, 2500, false},
		{"fewer queued than a stream's batch", applyStreamBatch - 1, 500, time.Second, time.Second, 2500, false},
		{"a stream's first batch", applyStreamBatch, 500, time.Second, never, 0, false},
		{"after a batch the stream paused before", applyStreamBatch, 500, time.Second, 2 * time.Second, 2500, false},
		{"saturated", applyStreamBatch, 500, time.Second, time.Second, 2500, true},
		{"saturated, a few events", applyStreamBatch, 8, 100 * time.Millisecond, 100 * time.Millisecond, 5, true},
		{"saturated, twice the batch before", applyStreamBatch, 500, time.Second, time.Second, 250, false},
		{"saturated, at the bound", applyStreamBatch, 500, applyBatchMaxDelay, applyBatchMaxDelay, 2500, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			queueChanges(t, q, c.queued)
			// The batch's stream paused twice applyBatchDelay ago.
			now := time.Now()
			a := &Applier{events: q, batch: make([]Applied, c.n), wroteN: c.wroteN,
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

// queueChanges brings CHANGES to n changes that no worker has taken
// (never fewer than it holds already).
func queueChanges(t *testing.T, q *queue.Queue, n int) {
	t.Helper()
	ctx := context.Background()
	// The stream's count is exact; the consumer's count of what no
	// worker has taken follows it a moment later.
	held, err := q.Backlog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := held; i < uint64(n); i++ {
		uri := fmt.Sprintf("http://example.org/r/%d", i)
		ch := &viaduct.Change{Source: "s", Collection: "s", URI: uri, Op: resourcesync.Created, Time: time.Now()}
		if err := q.PublishChange(ctx, ch); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Eventually(t, 10*time.Second, fmt.Sprintf("the consumer to count %d untaken changes", n), func() bool {
		m, err := q.Untaken(ctx)
		return err == nil && m == uint64(n)
	})
}

// TestFullBatchGrowsWhileWorkersAreSaturated: a batch that reaches
// applyBatchSize events may grow to applySaturatedBatch while CHANGES holds
// applyStreamBatch changes or more that no worker has taken, if it
// continues the batch written just before it, and not otherwise when the
// applier is not behind EVENTS (the catch-up itself is
// TestApplierCatchesUpInLargeBatches).
func TestFullBatchGrowsWhileWorkersAreSaturated(t *testing.T) {
	ctx := context.Background()
	q := queuetest.Start(t)
	for _, c := range []struct {
		name   string
		queued int
		first  bool // the stream's first batch: none was written before it
		limit  int
	}{
		{"nothing queued", 0, false, applyBatchSize},
		{"fewer queued than a stream's batch", applyStreamBatch - 1, false, applyBatchSize},
		{"saturated, a stream's first batch", applyStreamBatch, true, applyBatchSize},
		{"saturated", applyStreamBatch, false, applySaturatedBatch},
	} {
		t.Run(c.name, func(t *testing.T) {
			queueChanges(t, q, c.queued)
			a := &Applier{events: q, first: time.Now().Add(-time.Second)}
			if !c.first {
				a.wrote = a.first.Add(-applyBatchDelay / 2)
			}
			if got := a.limitAt(ctx, applyBatchSize); got != c.limit {
				t.Errorf("limitAt = %d, want %d", got, c.limit)
			}
		})
	}
}

// TestBatchBoundDoublesFromAStreamsStart: a batch that begins a stream (no
// batch written in the applyBatchMaxDelay before it) is written
// applyFirstBatchMaxDelay after its first event at the latest, and any
// other at twice the bound of the batch written last, up to
// applyBatchMaxDelay.
func TestBatchBoundDoublesFromAStreamsStart(t *testing.T) {
	first := time.Now()
	just := first.Add(-applyBatchDelay / 2)
	for _, c := range []struct {
		name       string
		wrote      time.Time
		wroteBound time.Duration
		want       time.Duration
	}{
		{"no batch written before", time.Time{}, 0, applyFirstBatchMaxDelay},
		{"the last batch long before", first.Add(-applyBatchMaxDelay), applyBatchMaxDelay, applyFirstBatchMaxDelay},
		{"the stream paused after the last batch", first.Add(-time.Second), applyBatchMaxDelay, applyBatchMaxDelay},
		{"after the stream's first batch", just, applyFirstBatchMaxDelay, 2 * applyFirstBatchMaxDelay},
		{"near the bound", just, applyBatchMaxDelay * 3 / 4, applyBatchMaxDelay},
		{"at the bound", just, applyBatchMaxDelay, applyBatchMaxDelay},
	} {
		a := &Applier{first: first, wrote: c.wrote, wroteBound: c.wroteBound}
		if got := a.maxDelay(); got != c.want {
			t.Errorf("%s: maxDelay = %v, want %v", c.name, got, c.want)
		}
	}
}
