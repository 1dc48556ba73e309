package sim

import (
	"sync"
	"time"
)

// hubFaults are the ways the simulated hub misdelivers, for tests of a
// subscriber's gap handling.
type hubFaults struct {
	mu        sync.Mutex
	drop      int
	swap      bool
	held      []byte // a notification held back to be sent after the next
	stopUntil time.Time
}

// DropNext makes the hub lose its next n notifications: the subscriber
// sees a gap in from/until.
func (h *Hub) DropNext(n int) {
	h.faults.mu.Lock()
	h.faults.drop += n
	h.faults.mu.Unlock()
}

// SwapNext makes the hub deliver its next two notifications in reverse
// order.
func (h *Hub) SwapNext() {
	h.faults.mu.Lock()
	h.faults.swap = true
	h.faults.mu.Unlock()
}

// Stop makes the hub deliver nothing for d: notifications made meanwhile
// are lost, as when a hub goes down.
func (h *Hub) Stop(d time.Duration) {
	h.faults.mu.Lock()
	h.faults.stopUntil = time.Now().Add(d)
	h.faults.mu.Unlock()
}

// route decides what becomes of one notification made at now: the
// payloads to publish, in order.
func (f *hubFaults) route(payload []byte, now time.Time) [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case now.Before(f.stopUntil):
		return nil
	case f.drop > 0:
		f.drop--
		return nil
	case f.swap:
		f.swap = false
		f.held = payload
		return nil
	case f.held != nil:
		held := f.held
		f.held = nil
		return [][]byte{payload, held}
	}
	return [][]byte{payload}
}
