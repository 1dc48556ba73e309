package harvester

import (
	"context"
	"sync"
	"time"

	"github.com/viaduct-mirror/viaduct/queue"
)

// Backlogger reports how many queued messages the fetch workers have not
// finished, each a change or a group of up to queue.GroupMax of them, in
// total and by subject (queue.ChangeSubject of each Source). A Publisher
// that has it keeps the harvester at most Config.MaxBacklog changes ahead
// of them, counting queue.GroupMax changes a message (a baseline's
// messages are full groups), and shares that among the Sources whose
// passes are due.
type Backlogger interface {
	Backlogs(ctx context.Context) (total uint64, bySubject map[string]uint64, err error)
}

var _ Backlogger = (*queue.Queue)(nil)

// backlogPoll is how often the backlog is read while a pass waits on it.
const backlogPoll = 50 * time.Millisecond

// backlogView is the harvester's last reading of the backlog, shared by
// every pass that waits on it, so that fifty waiting passes cost one
// request to the server a backlogPoll, not fifty.
type backlogView struct {
	mu        sync.Mutex
	at        time.Time
	total     uint64
	bySubject map[string]uint64
}

// read returns the backlog as read at most backlogPoll ago.
func (v *backlogView) read(ctx context.Context, bl Backlogger) (uint64, map[string]uint64, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if time.Since(v.at) < backlogPoll {
		return v.total, v.bySubject, nil
	}
	total, by, err := bl.Backlogs(ctx)
	if err != nil {
		return 0, nil, err
	}
	v.at, v.total, v.bySubject = time.Now(), total, by
	return total, by, nil
}

// queued says that changes were just queued: the next reading is taken
// afresh, so that passes flushing one after another within a backlogPoll
// see each other's changes.
func (v *backlogView) queued() {
	v.mu.Lock()
	v.at = time.Time{}
	v.mu.Unlock()
}

// awaitBacklog returns once the Source's own part of the backlog is at
// most its share, and the whole backlog at most twice the configured
// bound, or at once when the Publisher cannot tell. A Source's share is
// the bound divided among the passes due (running, or waiting for a
// slot): alone, a Source has the whole bound; with fifty Sources
// harvested at once, each has a fiftieth, so that the workers, each host
// bounded by its politeness, have every Source's changes to fetch rather
// than the few queued first. A pass that becomes due while others fill
// the backlog queues its share at once, beyond the bound (twice it at
// most), while theirs drains to their new, smaller shares. Having waited,
// it lets the workers bring its part down to three quarters of the share
// (and the whole to three quarters of its limit), so that a long baseline
// is queued in strides rather than one batch per poll. The wait gives the
// pass's slot (harvest.concurrency) to other Sources' passes at once: it
// is no work of the pass's, unlike a wait on the Source, which lends the
// slot only after harvest.starved_after. A failure to read
// the backlog is logged and does not stop the pass: the bound protects
// memory, it is not a correctness condition. Before it waits, the
// documents still being read are set aside (spoolOpen): the wait must not
// count against their responses' time.
func (p *pass) awaitBacklog(ctx context.Context) error {
	bl, ok := p.h.deps.Publisher.(Backlogger)
	if !ok {
		return nil
	}
	limit := uint64(max(1, p.h.cfg.MaxBacklog/queue.GroupMax))
	subject := queue.ChangeSubject(p.src.Name)
	over := func(resume bool) (bool, error) {
		total, by, err := p.h.backlog.read(ctx, bl)
		if err != nil {
			return false, err
		}
		bound := 2 * limit
		share := max(1, limit/uint64(max(1, p.h.due.Load())))
		if resume {
			bound, share = bound*3/4, share*3/4
		}
		return total > bound || by[subject] > share, nil
	}
	waiting, err := over(false)
	if err != nil {
		p.log.Warn("reading the queue's backlog failed; queueing anyway", "err", err)
		return nil
	}
	if !waiting {
		return nil
	}
	p.log.Debug("waiting for the fetch workers", "max_backlog_messages", limit, "sources_due", p.h.due.Load())
	p.spoolOpen()
	t := time.NewTicker(backlogPoll)
	defer t.Stop()
	return p.slot.aside(ctx, func() error {
		for {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.C:
			}
			waiting, err := over(true)
			if err != nil {
				p.log.Warn("reading the queue's backlog failed; queueing anyway", "err", err)
				return nil
			}
			if !waiting {
				return nil
			}
		}
	})
}
