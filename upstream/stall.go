package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// errStalled is the cause of a body read that a Source stopped feeding. It
// surfaces as an *Error of Kind ErrTransient with Op "read", so a caller
// counts and retries it as any other transient failure.
var errStalled = errors.New("body stalled")

// stallReader fails a response body whose bytes arrive slower than
// Config.MinBodyRate, measured over windows of Config.BodyRateWindow spent
// waiting inside Read. Only the time the caller waits for the Source
// counts: a consumer that stops reading for a while (the harvester waiting
// for the queue, say) reads the kernel's buffer at once when it resumes,
// and is never taken for a stalled Source. On a stall it cancels the
// attempt, which unblocks the Read under way; the attempt's request timeout
// still bounds the whole body.
type stallReader struct {
	r       io.ReadCloser
	window  time.Duration
	need    int64 // bytes that must arrive in one window
	rate    int64
	cancel  context.CancelFunc
	onStall func()

	mu        sync.Mutex
	timer     *time.Timer
	inRead    bool
	readStart time.Time
	spent     time.Duration // time spent inside Read in the current window
	got       int64         // bytes read in the current window
	stalled   error
}

// watchBody wraps r when the Config asks for a minimum rate; cancel ends
// the attempt r belongs to and onStall counts the stall.
func watchBody(r io.ReadCloser, cfg *Config, cancel context.CancelFunc, onStall func()) io.ReadCloser {
	if cfg.BodyRateWindow <= 0 {
		return r
	}
	need := int64(float64(cfg.MinBodyRate) * cfg.BodyRateWindow.Seconds())
	return &stallReader{r: r, window: cfg.BodyRateWindow, need: max(need, 1), rate: cfg.MinBodyRate, cancel: cancel, onStall: onStall}
}

func (s *stallReader) Read(p []byte) (int, error) {
	s.mu.Lock()
	if s.stalled != nil {
		s.mu.Unlock()
		return 0, s.stalled
	}
	s.inRead, s.readStart = true, time.Now()
	left := s.window - s.spent
	if s.timer == nil {
		s.timer = time.AfterFunc(left, s.check)
	} else {
		s.timer.Reset(left)
	}
	s.mu.Unlock()

	n, err := s.r.Read(p)

	s.mu.Lock()
	defer s.mu.Unlock()
	s.timer.Stop()
	s.inRead = false
	s.spent += time.Since(s.readStart)
	s.got += int64(n)
	if s.stalled != nil {
		return n, s.stalled
	}
	if s.spent >= s.window {
		if s.got < s.need && err == nil {
			s.stall()
			return n, s.stalled
		}
		s.spent, s.got = 0, 0
	}
	return n, err
}

// check runs when a window's worth of waiting has passed inside one Read.
func (s *stallReader) check() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.inRead || s.stalled != nil {
		return
	}
	now := time.Now()
	spent := s.spent + now.Sub(s.readStart)
	if spent < s.window {
		s.timer.Reset(s.window - spent)
		return
	}
	if s.got < s.need {
		s.stall()
		s.cancel()
		return
	}
	// Enough came earlier in the window: a new one starts now.
	s.spent, s.got, s.readStart = 0, 0, now
	s.timer.Reset(s.window)
}

// stall records the failure; s.mu is held.
func (s *stallReader) stall() {
	s.stalled = fmt.Errorf("%w: %d bytes in %s of waiting, below upstream.min_body_rate %d bytes/s", errStalled, s.got, s.window, s.rate)
	if s.onStall != nil {
		s.onStall()
	}
}

func (s *stallReader) Close() error {
	s.mu.Lock()
	if s.timer != nil {
		s.timer.Stop()
	}
	s.mu.Unlock()
	return s.r.Close()
}
