package harvester

import (
	"context"
	"fmt"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// kindDump counts Dumps and Dump packages that could not be used: refused
// packages, failed downloads, documents of the wrong kind. The pass then
// falls back to the lists when the Source offers them.
const kindDump = "dump"

// capChangeListIndex is the capability DSpace gives the Change List Index
// it names beside its newest Change List; it is read as a Change List.
const capChangeListIndex = "changelistindex"

// dumpsUsable reports whether a Dump at uri can be read: one is offered
// and the harvester has a blob store to put its bitstreams in.
func (p *pass) dumpsUsable(uri string) bool {
	return uri != "" && p.h.deps.Blobs != nil
}

// canBaseline reports whether the set's Capability List offers something
// a baseline can be taken from.
func (p *pass) canBaseline(caps capabilities) bool {
	return caps.first(resourcesync.CapResourceList) != "" || p.dumpsUsable(caps.first(resourcesync.CapResourceDump))
}

// baselineAny runs a due baseline from the Resource Dumps or the Resource
// Lists (every one the Capability List names, as one baseline). The Dumps
// are used when they are all the Source offers, or when the Source prefers
// Dumps and no baseline has completed yet: a first baseline needs every
// bitstream, which a few packages bring at once, while a later one needs
// only what differs, which the Resource List finds without downloading
// the rest again. A Dump that fails (a refused package, a failed
// download) is logged and counted, and the baseline is taken from the
// Resource Lists in the same pass. A Source offering Change Lists only is
// baselined from them: the changes pass reads them from the start.
func (p *pass) baselineAny(ctx context.Context, caps capabilities, hasChanges bool) error {
	rl, rd := caps[resourcesync.CapResourceList], caps[resourcesync.CapResourceDump]
	if len(rd) > 0 && p.dumpsUsable(rd[0]) && (len(rl) == 0 || (p.src.preferDumps && p.st.baseline.IsZero())) {
		err := p.dumpBaseline(ctx, rd, hasChanges)
		if err == nil || len(rl) == 0 || ctx.Err() != nil {
			return err
		}
		p.log.Error("Resource Dump not used, baseline from the Resource List instead", "uri", rd[0], "resourcelist", rl[0], "err", err)
	}
	if len(rl) == 0 {
		if hasChanges {
			return p.changeListBaseline(ctx)
		}
		return fmt.Errorf("source %s: a baseline is due but the Capability List %s offers no Resource List", p.src.Name, p.cs.URI)
	}
	return p.baseline(ctx, rl, hasChanges)
}

// changeListBaseline is the baseline of a set offering Change Lists only:
// nothing lists its resources, so the changes pass reads its Change Lists
// from its cursor (from the start, the first time) and the baseline is
// marked done for the schedule. A collection it shares with other sets
// infers no deletions from their lists (it may hold this set's
// resources), which is logged with the rest of the baseline.
func (p *pass) changeListBaseline(ctx context.Context) error {
	if p.shared[p.collection()] != nil {
		p.deferDeletes(&baselineRun{}, true)
	}
	now := time.Now()
	p.st.baseline = now
	return p.set(ctx, curBaseline, now.UTC().Format(time.RFC3339Nano))
}

// changesAny catches up from the Change Dump, then the Change Lists. The
// Change Dump is read when it is all the Source offers (its open package
// included), or when the Source prefers Dumps (closed packages only: an
// open package grows, and downloading it whole on every poll would cost
// more than the Change List's few new entries). The Change Lists then
// take over from the cursor the packages left. A Change Dump that fails
// is logged and counted, and the Change Lists do the whole catch-up. A
// gap (gap.go) is returned as a *gapError for the pass to close.
func (p *pass) changesAny(ctx context.Context, caps capabilities) error {
	cls, cd := caps[resourcesync.CapChangeList], caps.first(resourcesync.CapChangeDump)
	if n := len(caps[resourcesync.CapChangeDump]); n > 1 {
		// Packages of several Change Dumps would move one cursor past each
		// other's changes: the first is read, the Change Lists (when
		// offered) catch up the rest; counted and shown either way.
		p.tolerate(p.cs.URI, tolUnreadChangeDumps, n-1)
	}
	if p.dumpsUsable(cd) && (len(cls) == 0 || p.src.preferDumps) {
		if err := p.changeDump(ctx, cd, len(cls) == 0); err != nil {
			if len(cls) == 0 || ctx.Err() != nil {
				return err
			}
			p.log.Error("Change Dump not used, catching up from the Change List instead", "uri", cd, "changelist", cls[0], "err", err)
		}
	}
	switch len(cls) {
	case 0:
		return nil
	case 1:
		return p.incremental(ctx, cls[0])
	}
	return p.severalChangeLists(ctx, cls)
}
