package harvester

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/robfig/cron/v3"
)

// ErrNoSource is returned for a Source name that is not configured.
var ErrNoSource = errors.New("no such source")

// ErrNotRunning is returned when a pass is asked for while Run is not
// running (before start, after shutdown).
var ErrNotRunning = errors.New("harvester not running")

// control is the operator's hold on the harvester: what each Source's
// passes did, the passes asked for, and the Sources' cron entries, which a
// reload replaces. Its zero value is ready.
type control struct {
	mu      sync.Mutex
	tracked map[string]*tracked
	entries map[string]cron.EntryID
	runCtx  context.Context // Run's, while it runs
	// started is closed once Run first accepts passes (see Started).
	started     chan struct{}
	startedOnce sync.Once
}

// tracked is one Source's record, kept across reloads by name.
type tracked struct {
	running      bool
	runningSince time.Time
	rebaselining bool
	// pending is the pass asked for that has not started yet: requests
	// arriving while it waits join it, so ten requests make one pass, and
	// every request is answered by a pass that started after it.
	pending     *Request
	last        *PassRecord
	lastSuccess time.Time
	lastError   *PassRecord
	recent      []PassRecord // newest last, up to recentPasses
	// warnings are the tolerances of the last pass; gaps the last gaps
	// found, newest last, up to recentPasses (findings.go).
	warnings []Warning
	gaps     []Gap
}

// recentPasses is how many passes a Source's status keeps.
const recentPasses = 10

// PassRecord is one pass over a Source as the status reports it.
type PassRecord struct {
	Start      time.Time `json:"start"`
	End        time.Time `json:"end"`
	Rebaseline bool      `json:"rebaseline,omitempty"`
	// Error is why the pass failed, with the URI and what was wrong;
	// empty for a pass that succeeded.
	Error string `json:"error,omitempty"`
}

// Request is a pass asked for by an operator. Done is closed when the
// pass has ended; Err then says how.
type Request struct {
	Rebaseline bool
	done       chan struct{}
	err        error
}

// Done is closed when the requested pass has ended.
func (r *Request) Done() <-chan struct{} { return r.done }

// Err is the pass's result, once Done is closed.
func (r *Request) Err() error { return r.err }

func (c *control) track(name string) *tracked {
	if c.tracked == nil {
		c.tracked = map[string]*tracked{}
	}
	t := c.tracked[name]
	if t == nil {
		t = &tracked{}
		c.tracked[name] = t
	}
	return t
}

// Trigger asks for a pass over the named Source now, answering at once. A
// request made while another waits to start joins it (merged is true); a
// pass already under way is not interrupted, the requested one follows it.
// rebaseline asks for a forced full comparison with the Source's Resource
// List (see Rebaseline); joining a waiting pass makes that pass one.
func (h *Harvester) Trigger(name string, rebaseline bool) (req *Request, merged bool, err error) {
	s, ok := h.source(name)
	if !ok {
		return nil, false, fmt.Errorf("harvester: source %q: %w", name, ErrNoSource)
	}
	h.ctl.mu.Lock()
	defer h.ctl.mu.Unlock()
	ctx := h.ctl.runCtx
	if ctx == nil || ctx.Err() != nil {
		return nil, false, fmt.Errorf("harvester: pass over source %q: %w", name, ErrNotRunning)
	}
	t := h.ctl.track(name)
	if t.pending != nil {
		t.pending.Rebaseline = t.pending.Rebaseline || rebaseline
		return t.pending, true, nil
	}
	req = &Request{Rebaseline: rebaseline, done: make(chan struct{})}
	t.pending = req
	go h.serveRequest(ctx, s, req)
	return req, false, nil
}

// serveRequest runs the requested pass once the Source's pass under way,
// if any, has ended.
func (h *Harvester) serveRequest(ctx context.Context, s *source, req *Request) {
	defer close(req.done)
	if err := lockCtx(ctx, &s.mu); err != nil {
		req.err = err
		h.ctl.mu.Lock()
		h.ctl.track(s.Name).pending = nil
		h.ctl.mu.Unlock()
		return
	}
	defer s.mu.Unlock()
	h.ctl.mu.Lock()
	h.ctl.track(s.Name).pending = nil // later requests make a new one
	rebaseline := req.Rebaseline
	h.ctl.mu.Unlock()
	req.err = h.bounded(ctx, s, rebaseline)
}

// bounded runs one pass under the concurrency bound and the pass timeout,
// recording it; the caller holds s.mu.
func (h *Harvester) bounded(ctx context.Context, s *source, rebaseline bool) error {
	h.due.Add(1)
	defer h.due.Add(-1)
	sl := &slot{sem: h.sem, after: h.cfg.StarvedAfter}
	if err := sl.take(ctx); err != nil {
		return err
	}
	defer sl.give()
	ctx, done, err := h.hold(ctx, s)
	if err != nil || done == nil {
		return err // done nil: another node holds the Source's lease
	}
	defer done()
	ctx, cancel := context.WithTimeout(ctx, h.cfg.PassTimeout)
	defer cancel()
	return h.recorded(ctx, s, rebaseline, sl)
}

// recorded runs one pass and keeps its record for the status.
func (h *Harvester) recorded(ctx context.Context, s *source, rebaseline bool, sl *slot) error {
	start := time.Now()
	h.ctl.mu.Lock()
	t := h.ctl.track(s.Name)
	t.running, t.runningSince, t.rebaselining = true, start, rebaseline
	h.ctl.mu.Unlock()

	var err error
	if rebaseline {
		err = h.rebaseline(ctx, s)
	} else {
		err = h.pass(ctx, s, sl)
	}

	rec := PassRecord{Start: start, End: time.Now(), Rebaseline: rebaseline}
	if err != nil {
		rec.Error = err.Error()
	}
	h.ctl.mu.Lock()
	defer h.ctl.mu.Unlock()
	t.running, t.rebaselining = false, false
	t.last = &rec
	if err == nil {
		t.lastSuccess = rec.End
	} else {
		t.lastError = &rec
	}
	t.recent = append(t.recent, rec)
	if len(t.recent) > recentPasses {
		t.recent = t.recent[len(t.recent)-recentPasses:]
	}
	return err
}

// Started is closed once Run accepts passes asked for with Trigger: a
// caller that starts Run in a goroutine and answers requests at once (the
// node's admin API) waits for it, so that a pass asked for right after
// start-up is not refused as asked of a harvester not running.
func (h *Harvester) Started() <-chan struct{} { return h.ctl.started }
