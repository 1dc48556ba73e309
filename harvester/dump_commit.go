package harvester

import (
	"context"
	"sync"
)

// storeCommits is how many blob commits of one Dump package run at once.
// A commit returns only once its blob is durable, which for the directory
// store means waiting for its sync rounds; the store covers every commit
// waiting together with one round, so commits made one after another pay
// two rounds per bitstream while commits in flight together share them.
// Each commit in flight holds one temporary file open.
const storeCommits = 64

// committer runs the commits of one package, at most storeCommits at a
// time, and keeps the first error. Its goroutines are all stopped once
// wait has returned; the store call that makes it always calls wait.
type committer struct {
	ctx    context.Context
	cancel context.CancelFunc
	slots  chan struct{}
	wg     sync.WaitGroup
	mu     sync.Mutex
	err    error
}

func newCommitter(ctx context.Context) *committer {
	ctx, cancel := context.WithCancel(ctx)
	return &committer{ctx: ctx, cancel: cancel, slots: make(chan struct{}, storeCommits)}
}

// run starts fn once a slot is free and returns the first error of an
// earlier commit, if any, without starting fn; undo is then called in
// fn's place, so the caller's resources are released either way.
func (c *committer) run(fn func(ctx context.Context) error, undo func()) error {
	select {
	case c.slots <- struct{}{}:
	case <-c.ctx.Done():
		undo()
		return c.first(c.ctx.Err())
	}
	if err := c.first(nil); err != nil {
		<-c.slots
		undo()
		return err
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer func() { <-c.slots }()
		if err := fn(c.ctx); err != nil {
			c.fail(err)
		}
	}()
	return nil
}

func (c *committer) fail(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
		c.cancel()
	}
	c.mu.Unlock()
}

// first returns the first error recorded, or otherwise err.
func (c *committer) first(err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	return err
}

// wait waits for every commit started and returns the first error.
func (c *committer) wait() error {
	c.wg.Wait()
	c.cancel()
	return c.first(nil)
}
