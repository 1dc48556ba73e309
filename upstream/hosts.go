package upstream

import (
	"context"
	"sync"

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
// function that gives the slot back.
func (h *hosts) acquire(ctx context.Context, a Authority) (release func(), err error) {
	l := h.get(a)
	select {
	case l.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if err := l.rate.Wait(ctx); err != nil {
		<-l.slots
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { <-l.slots }) }, nil
}
