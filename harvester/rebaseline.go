package harvester

import (
	"context"
)

// rebaselineCursors are the cursors a re-baseline forgets: with them gone
// the pass finds the Source again, reads every document in full (no
// conditional GET answers "not modified") and compares its Resource List
// with the catalog as a first baseline would.
var rebaselineCursors = []string{curCapabilities, curValidators, curIndex, curBaseline, curTie, curChanges, curSets, curDescription}

// rebaseline is a pass that forgets the Source's cursors first and infers
// deletions whatever delete_missing says: after an upstream replaced its
// data set, its Change Lists may start again before the cursor, or say
// nothing of what it removed, and only a full comparison that removes
// what is gone brings the copy back to the Source. A re-baseline that
// fails leaves the cursors forgotten, so the next pass is a baseline too.
func (h *Harvester) rebaseline(ctx context.Context, s *source) error {
	for _, name := range rebaselineCursors {
		if err := h.deps.Cursors.SetCursor(ctx, s.Name, name, ""); err != nil {
			return err
		}
	}
	r := *s.resolved
	r.deleteMissing = true
	h.log.Info("re-baseline: cursors forgotten, comparing the whole Resource List", "source", s.Name, "collection", s.Collection)
	return h.pass(ctx, &source{resolved: &r, policy: s.policy, client: s.client, refusals: s.refusals}, nil)
}
