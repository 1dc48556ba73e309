package fetch

import (
	"log/slog"
	"sync"
	"time"

	"github.com/viaduct-mirror/viaduct/queue"
)

// heartbeat tells the queue, every so often, that a change is still being
// worked on, so that a long transfer is not handed to a second worker. It
// runs on a timer, not a goroutine of its own, so a short change costs
// nothing.
type heartbeat struct {
	mu      sync.Mutex
	t       *time.Timer
	stopped bool
}

func startHeartbeat(msg *queue.ChangeMsg, every time.Duration, log *slog.Logger) *heartbeat {
	h := &heartbeat{}
	var beat func()
	beat = func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.stopped {
			return
		}
		if err := msg.InProgress(); err != nil {
			log.Warn("could not extend a change being fetched", "source", msg.Change.Source, "uri", msg.Change.URI, "err", err)
		}
		h.t = time.AfterFunc(every, beat)
	}
	h.mu.Lock()
	h.t = time.AfterFunc(every, beat)
	h.mu.Unlock()
	return h
}

// stop ends the heartbeats; none is sent after it returns.
func (h *heartbeat) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stopped = true
	h.t.Stop()
}
