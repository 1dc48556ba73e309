package websub

// Change is one entry of a shared Store's change feed: the subscription
// stored under ID at Revision, or its deletion (Sub nil). A feed gives
// every write to the Store, puts and deletes, in the order of their
// revisions, which grow with each write.
type Change struct {
	Revision uint64
	ID       string
	Sub      *Subscription
}

// Follow applies c, read from the change feed of a Store that several
// hubs share (one per node): a subscription another hub took starts its
// delivery loop here, a renewal updates its lease and secret, and one
// that another hub ended stops.
//
// A hub's view of a subscription only moves forward: a change whose
// revision is not above the last one this hub applied or made itself for
// that subscription is ignored. So a feed that lags (a replica that has
// not yet applied the latest writes) can only tell this hub late, never
// undo what it knows; in particular, a change older than a subscription
// this hub has just verified cannot stop it. Nothing but a deletion read
// from the feed, or this hub's own, ends a subscription here.
func (h *Hub) Follow(c Change) {
	h.change.Lock()
	defer h.change.Unlock()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	if c.Revision <= h.revs[c.ID] {
		return
	}
	// The revision is kept for a deletion too, as the bucket keeps its
	// marker: a feed started again from a replica that has not yet
	// applied the deletion cannot bring the subscription back.
	h.revs[c.ID] = c.Revision
	w, ok := h.subs[c.ID]
	switch {
	case c.Sub == nil:
		if ok {
			w.cancel()
			delete(h.subs, c.ID)
		}
	case ok:
		w.sub = *c.Sub
		w.poke()
	case h.clock.Now().Before(c.Sub.Expires):
		h.startLocked(*c.Sub)
	}
}

// Wake has every delivery loop look at its queue at once: a hub whose
// Outbox has just started handing out deliveries (its node now delivers)
// calls it.
func (h *Hub) Wake() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, w := range h.subs {
		w.poke()
	}
}

// madeLocked records that this hub itself wrote the subscription id at
// revision rev, so that the feed's older changes to it are ignored; h.mu
// is held.
func (h *Hub) madeLocked(id string, rev uint64) {
	if rev > h.revs[id] {
		h.revs[id] = rev
	}
}
