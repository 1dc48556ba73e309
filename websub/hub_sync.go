package websub

import (
	"context"
	"fmt"
)

// Sync brings the Hub's subscriptions in line with its Store, for a Store
// that several hubs share (one per node): a subscription another hub took
// starts its delivery loop here, a renewal updates its lease and secret,
// and one that another hub ended stops. Every loop is woken, so that a
// hub whose Outbox has just started handing out deliveries (its node now
// delivers) looks at its queues at once.
func (h *Hub) Sync(ctx context.Context) error {
	subs, err := h.store.List(ctx)
	if err != nil {
		return fmt.Errorf("websub hub: reading subscriptions: %w", err)
	}
	h.change.Lock()
	defer h.change.Unlock()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	now := h.clock.Now()
	seen := make(map[string]bool, len(subs))
	for _, s := range subs {
		id := s.ID()
		seen[id] = true
		if w, ok := h.subs[id]; ok {
			w.sub = s
			continue
		}
		if now.Before(s.Expires) {
			h.startLocked(s)
		}
	}
	for id, w := range h.subs {
		if !seen[id] {
			w.cancel()
			delete(h.subs, id)
		}
	}
	for _, w := range h.subs {
		w.poke()
	}
	return nil
}
