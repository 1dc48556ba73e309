package admin

import (
	"context"
	"sync"
)

// coalescer runs one job at a time per key: a request made while the
// key's job runs joins it and gets its result, so ten requests to rebuild
// a collection's Dumps make one rebuild.
type coalescer struct {
	mu      sync.Mutex
	running map[string]*job
}

type job struct {
	done chan struct{}
	err  error
}

func newCoalescer() *coalescer { return &coalescer{running: map[string]*job{}} }

// do starts f for key unless a job for key runs already; joined says
// which. The job runs under ctx, not the request's, so a client that
// stops waiting does not cancel it for the others.
func (c *coalescer) do(ctx context.Context, key string, f func(context.Context) error) (j *job, joined bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if j := c.running[key]; j != nil {
		return j, true
	}
	j = &job{done: make(chan struct{})}
	c.running[key] = j
	go func() {
		j.err = f(ctx)
		c.mu.Lock()
		delete(c.running, key)
		c.mu.Unlock()
		close(j.done)
	}()
	return j, false
}
