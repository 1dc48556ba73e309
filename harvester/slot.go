package harvester

import (
	"context"
	"io"
	"sync/atomic"
	"time"
)

// slot is a pass's share of harvest.concurrency. A pass waiting on its
// Source (a GET whose answer is slow to come, a document that trickles)
// gives its slot back once it has waited StarvedAfter, so that a slow
// Source occupies its own pass and never every slot, and takes one again
// as soon as the Source answers. What the slots bound is the work of
// reading, comparing and queueing, not the waiting. The minimum transfer
// rate of every body (upstream.min_body_rate) bounds how long a Source
// may keep a pass waiting at all.
type slot struct {
	sem   chan struct{}
	after time.Duration
	held  atomic.Bool
}

// take waits for a free slot.
func (s *slot) take(ctx context.Context) error {
	select {
	case s.sem <- struct{}{}:
		s.held.Store(true)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// give hands the slot back if the pass holds it (a pass stopped while
// waiting for it holds none).
func (s *slot) give() {
	if s.held.Swap(false) {
		<-s.sem
	}
}

// waiting runs f, which waits on the Source: past s.after the slot is
// given back, and taken again when f returns. A nil slot only runs f.
func (s *slot) waiting(ctx context.Context, f func() error) error {
	if s == nil || s.after <= 0 {
		return f()
	}
	gave := make(chan struct{})
	t := time.AfterFunc(s.after, func() { s.give(); close(gave) })
	err := f()
	if !t.Stop() {
		<-gave
		if terr := s.take(ctx); terr != nil && err == nil {
			err = terr
		}
	}
	return err
}

// aside runs f, which waits on something other than the Source (the
// fetch workers bringing the backlog down): nothing of the pass's work is
// under way, so the slot is given back at once, not after s.after, and
// taken again when f returns. Held for s.after, the slots let four passes
// start every s.after, and the last of fifty Sources' passes started 27 s
// after the first. A nil slot only runs f.
func (s *slot) aside(ctx context.Context, f func() error) error {
	if s == nil || !s.held.Load() {
		return f()
	}
	s.give()
	err := f()
	if terr := s.take(ctx); terr != nil && err == nil {
		err = terr
	}
	return err
}

// reader is body read under waiting; body itself for a nil slot.
func (s *slot) reader(ctx context.Context, body io.ReadCloser) io.ReadCloser {
	if s == nil || s.after <= 0 {
		return body
	}
	return starvedReader{ctx: ctx, r: body, s: s}
}

// starvedReader reads a Source's body under waiting.
type starvedReader struct {
	ctx context.Context
	r   io.ReadCloser
	s   *slot
}

func (r starvedReader) Close() error { return r.r.Close() }

func (r starvedReader) Read(p []byte) (n int, err error) {
	werr := r.s.waiting(r.ctx, func() error {
		n, err = r.r.Read(p)
		return nil
	})
	if err == nil {
		err = werr
	}
	return n, err
}
