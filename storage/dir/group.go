package dir

import (
	"errors"
	"sync"
	"time"
)

// errEarlierRound fails a commit when a sync round that ran while its
// bytes were in flight failed: the failure may have been this blob's
// write-back, and a later round would not report it again.
var errEarlierRound = errors.New("a sync of the blob store failed while the blob was being written")

// grouper runs sync rounds for many commits at once (group commit). A
// commit adds what it needs synced (T: a directory for the sync rounds,
// records for the packs' rounds) to the round being gathered and waits;
// while one round runs the next gathers, and the first of its waiters to
// see the grouper free runs the whole of it. Under load one round covers
// every commit that arrived while the previous one ran; alone, a commit
// starts its round at once, with no added delay. It runs no goroutine of
// its own, so it needs no Close.
//
// With a gap, a round does not start sooner than gap after the previous
// one started: the commits arriving meanwhile join it. A round costs about
// the same however many commits it covers (a syncfs writes back the whole
// file system and flushes the device once), so under a steady stream of
// commits fewer, larger rounds cost less CPU and write less, and the
// device is not kept flushing back to back. An idle store still starts a
// lone commit's round at once.
type grouper[T comparable] struct {
	// run syncs one round: what its commits gathered, each item once
	// (the sync rounds' directories, which syncfs ignores).
	run func(items []T) error
	gap time.Duration

	mu      sync.Mutex
	cond    *sync.Cond
	busy    bool      // a round is running
	next    *round[T] // gathering, not yet started; nil when empty
	started uint64    // rounds started so far
	failed  uint64    // number of the last round that failed; 0 for none
	last    time.Time // when the last round started
}

// round is what one sync covers.
type round[T comparable] struct {
	n      uint64
	joined int // commits waiting on it
	items  []T
	has    map[T]bool
	err    error
	done   bool
}

func newGrouper[T comparable](run func([]T) error, gap time.Duration) *grouper[T] {
	g := &grouper[T]{run: run, gap: gap}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// mark is taken before a blob's bytes are written; wait compares it with
// the rounds that failed since.
func (g *grouper[T]) mark() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.started
}

// wait returns once a round that started after the call has synced
// items (and whatever else its run covers). It fails if that round
// failed, or if any round started after mark failed.
func (g *grouper[T]) wait(mark uint64, items ...T) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.next
	if r == nil {
		r = &round[T]{has: map[T]bool{}}
		g.next = r
	}
	r.joined++
	for _, it := range items {
		if !r.has[it] {
			r.has[it] = true
			r.items = append(r.items, it)
		}
	}
	for !r.done {
		if g.busy || g.next != r {
			g.cond.Wait()
			continue
		}
		// The grouper is free and r is gathering: run it, once the gap
		// since the last round has passed (r keeps gathering until then).
		// Later callers gather the next round meanwhile.
		if wait := g.gap - time.Since(g.last); wait > 0 {
			g.busy = true
			g.mu.Unlock()
			time.Sleep(wait)
			g.mu.Lock()
		}
		g.started++
		g.busy, g.next, r.n = true, nil, g.started
		g.last = time.Now()
		g.mu.Unlock()
		err := g.run(r.items)
		g.mu.Lock()
		if err != nil {
			g.failed = r.n
		}
		r.err, r.done, g.busy = err, true, false
		g.cond.Broadcast()
	}
	switch {
	case r.err != nil:
		return r.err
	case g.failed > mark:
		return errEarlierRound
	}
	return nil
}

// syncDirs is the portable round: each directory synced once.
func syncDirs(dirs []string) error {
	var errs []error
	for _, d := range dirs {
		if err := syncDir(d); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
