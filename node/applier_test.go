package node

import (
	"testing"
	"time"
)

// TestBatchWait: a small batch is written applyBatchDelay after its first
// event, one that gathers a stream waits until applyBatchMaxDelay.
func TestBatchWait(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	for _, c := range []struct {
		name string
		now  time.Time
		n    int
		want time.Duration
	}{
		{"a lone event, at the delay", ms(20), 1, 0},
		{"a lone event, early", ms(12), 1, 8 * time.Millisecond},
		{"a few pushes, at the delay", ms(20), applyStreamBatch - 1, 0},
		{"a stream, at the delay", ms(20), applyStreamBatch, 480 * time.Millisecond},
		{"a stream, near the bound", ms(498), 500, 2 * time.Millisecond},
		{"a stream, at the bound", ms(500), 500, 0},
		{"a stream, past the bound", ms(530), 500, 0},
	} {
		if got := batchWait(c.now, t0, c.n); got != c.want {
			t.Errorf("%s: batchWait = %v, want %v", c.name, got, c.want)
		}
	}
}
