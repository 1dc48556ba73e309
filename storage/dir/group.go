package dir

import (
	"sync"
)

// dirSyncer syncs directories for many commits at once (group commit).
// A commit that needs its directory entries durable adds the directories
// to the gathering batch and waits; while one batch is being synced the
// next one gathers, and the first of its waiters to see the syncer free
// syncs the whole of it. Under load a sync covers every blob committed
// while the previous one ran; alone, a commit syncs at once, with no
// added delay. It runs no goroutine of its own, so it needs no Close.
type dirSyncer struct {
	sync func(dir string) error // syncDir; replaced in tests

	mu      sync.Mutex
	cond    *sync.Cond
	busy    bool      // a batch is being synced
	next    *dirBatch // gathering, not yet started; nil when empty
	batches uint64    // batches synced, for tests
}

// dirBatch is the set of directories one sync round covers.
type dirBatch struct {
	dirs []string
	has  map[string]bool
	errs map[string]error
	done bool
}

func newDirSyncer() *dirSyncer {
	g := &dirSyncer{sync: syncDir}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// syncAll returns once every directory in dirs has been synced after the
// call began, or with the first error syncing one of them.
func (g *dirSyncer) syncAll(dirs ...string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	b := g.next
	if b == nil {
		b = &dirBatch{has: map[string]bool{}}
		g.next = b
	}
	for _, d := range dirs {
		if !b.has[d] {
			b.has[d] = true
			b.dirs = append(b.dirs, d)
		}
	}
	for !b.done {
		if g.busy || g.next != b {
			g.cond.Wait()
			continue
		}
		// The syncer is free and b is gathering: sync it. Later callers
		// start a new batch meanwhile.
		g.busy, g.next = true, nil
		g.mu.Unlock()
		errs := map[string]error{}
		for _, d := range b.dirs {
			if err := g.sync(d); err != nil {
				errs[d] = err
			}
		}
		g.mu.Lock()
		b.errs, b.done, g.busy = errs, true, false
		g.batches++
		g.cond.Broadcast()
	}
	for _, d := range dirs {
		if err := b.errs[d]; err != nil {
			return err
		}
	}
	return nil
}
