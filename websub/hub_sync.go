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
//
// The Store is read outside the Hub's locks; a read made before this hub
// activated or removed a subscription itself is read again, or it would
// undo what this hub had just done (stop a subscription verified a moment
// ago, whose notifications its node would then skip).
func (h *Hub) Sync(ctx context.Context) error {
	for {
		h.mu.Lock()
		seen := h.changes
		h.mu.Unlock()
		subs, err := h.store.List(ctx)
		if err != nil {
			return fmt.Errorf("websub hub: reading subscriptions: %w", err)
		}
		if h.apply(subs, seen) {
			return nil
		}
	}
}

// apply makes subs, read from the Store when the hub had made seen
// changes of its own, the hub's subscriptions; it reports false, doing
// nothing, when the hub has made another change since.
func (h *Hub) apply(subs []Subscription, seen uint64) bool {
	h.change.Lock()
	defer h.change.Unlock()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return true
	}
	if h.changes != seen {
		return false
	}
	now := h.clock.Now()
	stored := make(map[string]bool, len(subs))
	for _, s := range subs {
		id := s.ID()
		stored[id] = true
		if w, ok := h.subs[id]; ok {
			w.sub = s
			continue
		}
		if now.Before(s.Expires) {
			h.startLocked(s)
		}
	}
	for id, w := range h.subs {
		if !stored[id] {
			w.cancel()
			delete(h.subs, id)
		}
	}
	for _, w := range h.subs {
		w.poke()
	}
	return true
}
