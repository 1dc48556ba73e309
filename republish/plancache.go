package republish

import "sync"

// planCache keeps the last Resource List plan of each collection with the
// catalog state it was made from (the sequence of the last applied event,
// see partPlanner). Planning a million-resource collection walks an index
// of a million rows; a Destination that fetches the index and then its
// parts, or many Destinations polling an unchanged catalog, would
// otherwise pay that on every index request. A plan is used only for the
// very state it was made from, so every replica still serves, for a given
// catalog state, the index any other would. It holds one plan per
// configured collection, a few bytes per part.
type planCache struct {
	mu    sync.Mutex
	plans map[string]cachedPlan
}

// cachedPlan is a plan and the state it was made from.
type cachedPlan struct {
	seq   uint64
	parts []part
}

func newPlanCache() *planCache { return &planCache{plans: map[string]cachedPlan{}} }

// get returns the plan of coll made at seq, if it is kept.
func (c *planCache) get(coll string, seq uint64) ([]part, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.plans[coll]
	if !ok || p.seq != seq {
		return nil, false
	}
	return p.parts, true
}

// put keeps the plan of coll made at seq, unless a plan of a later state
// is kept already (two requests planning at once across a change).
func (c *planCache) put(coll string, seq uint64, parts []part) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.plans[coll]; ok && p.seq > seq {
		return
	}
	c.plans[coll] = cachedPlan{seq: seq, parts: parts}
}
