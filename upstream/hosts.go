package upstream

import (
	"context"
	"errors"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// hosts keeps the politeness state per upstream authority: a semaphore
// bounding concurrent requests and a token bucket bounding the request
// rate. The set of authorities is bounded by the Policies in use.
type hosts struct {
	mu    sync.Mutex
	cfg   *Config
	limit map[Authority]*hostLimit
}

type hostLimit struct {
	slots chan struct{}
	rate  *rate.Limiter
}

func newHosts(cfg *Config) *hosts {
	return &hosts{cfg: cfg, limit: map[Authority]*hostLimit{}}
}

func (h *hosts) get(a Authority) *hostLimit {
	h.mu.Lock()
	defer h.mu.Unlock()
	l, ok := h.limit[a]
	if !ok {
		l = &hostLimit{
			slots: make(chan struct{}, h.cfg.PerHostConcurrency),
			rate:  rate.NewLimiter(rate.Limit(h.cfg.PerHostRate), h.cfg.PerHostBurst),
		}
		h.limit[a] = l
	}
	return l
}

// acquire waits for a free slot and a rate token for a, and returns the
// function that gives the slot back. A positive wait bounds how long it
// waits for both: past it, acquire fails with ErrBusy and holds nothing, so
// the caller can turn to another host's work. A wait of 0 waits as long as
// ctx allows.
func (h *hosts) acquire(ctx context.Context, a Authority, wait time.Duration) (release func(), err error) {
	l := h.get(a)
	var deadline <-chan time.Time
	if wait > 0 {
		select {
		case l.slots <- struct{}{}:
		default:
			t := time.NewTimer(wait)
			defer t.Stop()
			deadline = t.C
		}
	}
	if deadline != nil || wait <= 0 {
		select {
		case l.slots <- struct{}{}:
		case <-deadline:
			return nil, errBusy
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if wait > 0 {
		r := l.rate.Reserve()
		if d := r.Delay(); d > wait {
			r.Cancel()
			<-l.slots
			return nil, errBusy
		} else if d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				r.Cancel()
				<-l.slots
				return nil, ctx.Err()
			}
		}
	} else if err := l.rate.Wait(ctx); err != nil {
		<-l.slots
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { <-l.slots }) }, nil
}

// errBusy is the cause of an ErrBusy failure.
var errBusy = errors.New("every slot of the host stayed taken")

// saturated reports whether every slot of a is taken, or its rate allows
// no request, right now.
func (h *hosts) saturated(a Authority) bool {
	l := h.get(a)
	return len(l.slots) == cap(l.slots) || l.rate.Tokens() < 1
}

// Saturated reports whether every concurrency slot of host a (read with
// ParseAuthority) is taken, or its request rate allows none, right now,
// so that a caller with other work can do it first.
func (c *Client) Saturated(a Authority) bool { return c.core.hosts.saturated(a) }

// RateWait is how long until host a's request rate allows a request (0:
// now), and whether every slot of a is taken, which no wait frees: a slot
// comes back when a request ends.
func (c *Client) RateWait(a Authority) (wait time.Duration, slotsTaken bool) {
	l := c.core.hosts.get(a)
	if len(l.slots) == cap(l.slots) {
		return 0, true
	}
	tokens, limit := l.rate.Tokens(), float64(l.rate.Limit())
	if tokens >= 1 || limit <= 0 || math.IsInf(limit, 1) {
		return 0, false
	}
	return time.Duration((1 - tokens) / limit * float64(time.Second)), false
}
