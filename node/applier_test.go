package node

import (
	"testing"
	"time"
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
