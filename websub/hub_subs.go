package websub

import (
	"context"
	"fmt"
)

// activate stores a verified subscription and starts or updates its
// delivery loop. A resubscription keeps its queue.
func (h *Hub) activate(ctx context.Context, s Subscription) error {
	h.change.Lock()
	defer h.change.Unlock()
	rev, err := h.store.Put(ctx, s)
	if err != nil {
		return fmt.Errorf("storing the subscription of %s to %s: %w", s.Callback, s.Topic, err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.madeLocked(s.ID(), rev)
	if w, ok := h.subs[s.ID()]; ok {
		w.sub = s
		w.poke()
		return nil
	}
	h.log.Info("websub hub: subscribed", "uri", s.Callback, "topic", s.Topic, "lease_seconds", s.Lease)
	h.startLocked(s)
	return nil
}

// startLocked starts the delivery loop of s; h.mu is held or h is not yet
// shared.
func (h *Hub) startLocked(s Subscription) {
	ctx, cancel := context.WithCancel(h.ctx)
	w := &worker{sub: s, wake: make(chan struct{}, 1), cancel: cancel}
	h.subs[s.ID()] = w
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		h.run(ctx, w)
	}()
}

// remove ends the subscription id: its loop stops, its queue is dropped
// and the Store forgets it. Should the Store fail to, the subscription
// stays ended on this hub while the Store (and the hubs that follow it)
// may still hold it, until the next change to it or the end of its lease.
func (h *Hub) remove(ctx context.Context, id, why string) error {
	h.change.Lock()
	defer h.change.Unlock()
	h.mu.Lock()
	w, ok := h.subs[id]
	delete(h.subs, id)
	h.mu.Unlock()
	if ok {
		w.cancel()
		h.log.Info("websub hub: subscription ended", "uri", w.sub.Callback, "topic", w.sub.Topic, "reason", why)
	}
	rev, err := h.drop(ctx, id)
	if err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.madeLocked(id, rev)
	return nil
}

// drop deletes a subscription and its queue from Store and Outbox, and
// returns the revision of the deletion.
func (h *Hub) drop(ctx context.Context, id string) (uint64, error) {
	if err := h.outbox.Purge(ctx, id); err != nil {
		return 0, fmt.Errorf("purging the queue of subscription %s: %w", id, err)
	}
	rev, err := h.store.Delete(ctx, id)
	if err != nil {
		return 0, fmt.Errorf("deleting subscription %s: %w", id, err)
	}
	return rev, nil
}

// current is the subscription as it is now (a renewal may have changed
// its lease and secret).
func (h *Hub) current(w *worker) Subscription {
	h.mu.Lock()
	defer h.mu.Unlock()
	return w.sub
}
