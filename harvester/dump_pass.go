package harvester

import (
	"context"
	"fmt"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// kindDump counts Dumps and Dump packages that could not be used: refused
// packages, failed downloads, documents of the wrong kind. The pass then
// falls back to the lists when the Source offers them.
const kindDump = "dump"

// dumpsUsable reports whether a Dump at uri can be read: one is offered
// and the harvester has a blob store to put its bitstreams in.
func (p *pass) dumpsUsable(uri string) bool {
	return uri != "" && p.h.deps.Blobs != nil
}

// baselineAny runs a due baseline from the Resource Dump or the Resource
// List. The Dump is used when it is all the Source offers, or when the
// Source prefers Dumps and no baseline has completed yet: a first baseline
// needs every bitstream, which a few packages bring at once, while a later
// one needs only what differs, which the Resource List finds without
// downloading the rest again. A Dump that fails (a refused package, a
// failed download) is logged and counted, and the baseline is taken from
// the Resource List in the same pass.
func (p *pass) baselineAny(ctx context.Context, caps capabilities, hasChanges bool) error {
	rl, rd := caps[resourcesync.CapResourceList], caps[resourcesync.CapResourceDump]
	if p.dumpsUsable(rd) && (rl == "" || (p.src.preferDumps && p.st.baseline.IsZero())) {
		err := p.dumpBaseline(ctx, rd, hasChanges)
		if err == nil || rl == "" || ctx.Err() != nil {
			return err
		}
		p.log.Error("Resource Dump not used, baseline from the Resource List instead", "uri", rd, "resourcelist", rl, "err", err)
	}
	if rl == "" {
		return fmt.Errorf("source %s: a baseline is due but the Capability List offers no Resource List", p.src.Name)
	}
	return p.baseline(ctx, rl, hasChanges)
}

// changesAny catches up from the Change Dump, then the Change List. The
// Change Dump is read when it is all the Source offers (its open package
// included), or when the Source prefers Dumps (closed packages only: an
// open package grows, and downloading it whole on every poll would cost
// more than the Change List's few new entries). The Change List then takes
// over from the cursor the packages left. A Change Dump that fails is
// logged and counted, and the Change List does the whole catch-up.
func (p *pass) changesAny(ctx context.Context, caps capabilities) error {
	cl, cd := caps[resourcesync.CapChangeList], caps[resourcesync.CapChangeDump]
	if p.dumpsUsable(cd) && (cl == "" || p.src.preferDumps) {
		if err := p.changeDump(ctx, cd, cl == ""); err != nil {
			if cl == "" || ctx.Err() != nil {
				return err
			}
			p.log.Error("Change Dump not used, catching up from the Change List instead", "uri", cd, "changelist", cl, "err", err)
		}
	}
	if cl == "" {
		return nil
	}
	return p.incremental(ctx, cl)
}
