package node

import (
	"testing"
	"time"
)

// TestBatchWait: a batch is written applyBatchDelay after its first event
// once events pause, waits while they keep coming, and never longer than
// applyBatchMaxDelay.
func TestBatchWait(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	for _, c := range []struct {
		name             string
		now, first, last time.Time
		want             time.Duration
	}{
		{"a lone event, at the delay", ms(20), ms(0), ms(0), 0},
		{"a lone event, early", ms(12), ms(0), ms(0), 8 * time.Millisecond},
		{"events paused, at the delay", ms(20), ms(0), ms(10), 0},
		{"events still coming", ms(20), ms(0), ms(19), 4 * time.Millisecond},
		{"a steady stream, under the bound", ms(60), ms(0), ms(60), applyQuiet},
		{"a steady stream, near the bound", ms(98), ms(0), ms(98), 2 * time.Millisecond},
		{"a steady stream, at the bound", ms(100), ms(0), ms(100), 0},
		{"a pause after a long batch", ms(70), ms(0), ms(60), 0},
	} {
		if got := batchWait(c.now, c.first, c.last); got != c.want {
			t.Errorf("%s: batchWait = %v, want %v", c.name, got, c.want)
		}
	}
}
