package fixity

import (
	"context"
	"sync"
	"time"
)

// pacer holds the audit to its budget of bytes a second: a token bucket
// that may go into debt, so that a read larger than the bucket waits for
// its bytes after the fact rather than being refused. Over any stretch
// of time t, at most rate*t + burst bytes pass it. Its clock and its
// sleep are the Deps', so that a test can run it on a virtual clock.
type pacer struct {
	rate  float64 // bytes a second
	burst float64
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error

	mu     sync.Mutex
	tokens float64
	last   time.Time
}

func newPacer(rate, burst int64, now func() time.Time, sleep func(context.Context, time.Duration) error) *pacer {
	burst = min(rate, burst)
	return &pacer{rate: float64(rate), burst: float64(burst), now: now, sleep: sleep, tokens: float64(burst), last: now()}
}

// wait takes n bytes from the budget, sleeping as long as the budget is
// in debt.
func (p *pacer) wait(ctx context.Context, n int) error {
	p.mu.Lock()
	now := p.now()
	p.tokens = min(p.burst, p.tokens+now.Sub(p.last).Seconds()*p.rate)
	p.last = now
	p.tokens -= float64(n)
	debt := p.tokens
	p.mu.Unlock()
	if debt >= 0 {
		return nil
	}
	return p.sleep(ctx, time.Duration(-debt/p.rate*float64(time.Second)))
}

// sleepCtx sleeps for d, or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
