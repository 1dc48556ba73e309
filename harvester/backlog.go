package harvester

import (
	"context"
	"time"

	"github.com/viaduct-mirror/viaduct/queue"
)

// Backlogger reports how many queued messages the fetch workers have not
// finished, each a change or a group of up to queue.GroupMax of them. A
// Publisher that has it keeps the harvester at most Config.MaxBacklog
// changes ahead of them, counting queue.GroupMax changes a message (a
// baseline's messages are full groups).
type Backlogger interface {
	Backlog(ctx context.Context) (uint64, error)
}

var _ Backlogger = (*queue.Queue)(nil)

// backlogPoll is how often a waiting harvester asks for the backlog again.
const backlogPoll = 50 * time.Millisecond

// awaitBacklog returns once the backlog is at most the configured bound,
// or at once when the Publisher cannot tell. Having waited, it lets the
// workers bring the backlog down to three quarters of the bound, so that
// a long baseline is queued in strides rather than one batch per poll. A
// failure to read the backlog is logged and does not stop the pass: the
// bound protects memory, it is not a correctness condition. Before it
// waits, the documents still being read are set aside (spoolOpen): the
// wait must not count against their responses' time.
func (p *pass) awaitBacklog(ctx context.Context) error {
	bl, ok := p.h.deps.Publisher.(Backlogger)
	if !ok {
		return nil
	}
	limit := uint64(max(1, p.h.cfg.MaxBacklog/queue.GroupMax))
	n, err := bl.Backlog(ctx)
	if err != nil {
		p.log.Warn("reading the queue's backlog failed; queueing anyway", "err", err)
		return nil
	}
	if n <= limit {
		return nil
	}
	p.log.Debug("waiting for the fetch workers", "backlog_messages", n, "max_backlog_messages", limit)
	p.spoolOpen()
	resume := limit * 3 / 4
	t := time.NewTicker(backlogPoll)
	defer t.Stop()
	for n > resume {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		if n, err = bl.Backlog(ctx); err != nil {
			p.log.Warn("reading the queue's backlog failed; queueing anyway", "err", err)
			return nil
		}
	}
	return nil
}
