package harvester

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrNoProgress ends a pass that waited on its Source for
// Config.ProgressTimeout without reading a new entry. The pass fails as
// any other (counted, recorded, its cursors unmoved) and the Source is
// polled again at its next schedule.
var ErrNoProgress = errors.New("no progress")

// progressWatch is a pass's progress deadline. Only the time the pass
// spends waiting on its Source counts: for the answer to a GET, or inside
// the reader for the next entry of a document. Waiting for the queue or
// the fetch workers, and reading a document already spooled to disk, do
// not: a healthy Source whose pass waits for the workers is never taken
// for a stalled one. Each entry read, and each document read to its end,
// starts the count again. The minimum body rate (upstream.min_body_rate)
// answers a Source that sends nothing; the watch answers one that sends
// just enough bytes, or bytes that never make an entry (whitespace,
// comments, a slowly generated list).
type progressWatch struct {
	limit  time.Duration
	cancel context.CancelCauseFunc

	mu      sync.Mutex
	spent   time.Duration // waiting since the last progress, waits ended
	waits   int           // waits under way
	started time.Time     // when the waits under way began
	timer   *time.Timer
}

// newProgressWatch returns a watch that ends the pass through cancel, or
// nil (no deadline) when limit is not positive.
func newProgressWatch(limit time.Duration, cancel context.CancelCauseFunc) *progressWatch {
	if limit <= 0 {
		return nil
	}
	return &progressWatch{limit: limit, cancel: cancel}
}

// waiting runs f, which waits on the Source, counting its time.
func (w *progressWatch) waiting(f func() error) error {
	if w == nil {
		return f()
	}
	w.mu.Lock()
	if w.waits == 0 {
		w.started = time.Now()
		w.timer = time.AfterFunc(w.limit-w.spent, w.expire)
	}
	w.waits++
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.waits--; w.waits == 0 {
			w.timer.Stop()
			w.spent += time.Since(w.started)
		}
	}()
	return f()
}

// progressed starts the count again: an entry was read, or a document
// ended.
func (w *progressWatch) progressed() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.spent = 0
	if w.waits > 0 {
		w.started = time.Now()
		w.timer.Reset(w.limit)
	}
}

func (w *progressWatch) expire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.waits == 0 || w.spent+time.Since(w.started) < w.limit {
		return // progress came, or the wait ended, as the timer fired
	}
	w.cancel(fmt.Errorf("waited %s on the Source without a new entry (harvest.progress_timeout): %w", w.limit, ErrNoProgress))
}

// stalledPass gives a pass's error the cause of its end when its progress
// deadline ended it, so that its record and log say why.
func stalledPass(ctx context.Context, source string, err error) error {
	if err == nil {
		return nil
	}
	if cause := context.Cause(ctx); errors.Is(cause, ErrNoProgress) && !errors.Is(err, ErrNoProgress) {
		return fmt.Errorf("source %s: pass ended: %w (%v)", source, cause, err)
	}
	return err
}
