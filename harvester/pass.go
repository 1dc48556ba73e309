package harvester

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/upstream"
)

// pass is one pass over one Source: what it read of the Source's cursors
// and what it found on the way.
type pass struct {
	h      *Harvester
	src    *source
	client *upstream.Client
	policy *upstream.Policy
	log    *slog.Logger
	slot   *slot          // nil: the pass waits holding its share
	watch  *progressWatch // the progress deadline; nil: none
	st     state
	// badEntries counts entries skipped because they could not be read.
	badEntries int
	// listed counts the entries read, for a baseline's progress lines.
	listed atomic.Int64
	// refusedIn is this pass's refused entries by document, logged as one
	// summary per document when the pass ends (refusals.go).
	refusedIn map[string]*refusalTally
	// chanTopic and chanHub are the change notification channel the
	// Capability List offers, if any.
	chanTopic, chanHub string
	// bodies are the documents the pass has opened, to be spooled when
	// it waits for the fetch workers (spoolOpen).
	bodies []*spoolBody
	// cs is the capability set being harvested, nil before the sets are
	// known (the Source's own cursors are then read and written); extra
	// holds the cursors of the non-primary sets (setcursor.go).
	cs    *capSet
	extra map[string]map[string]string
	// shared and deferred are the deletions of collections that several
	// sets share, inferred once all of them have been baselined
	// (groups.go).
	shared   map[string]*uriSet
	deferred map[string]*baselineRun
	// tolerated counts what this pass read although a Source should not
	// write it, by document and kind (tolerate.go).
	tolerated map[toleranceKey]int
	// gaps are the gaps found this pass and how each was closed (gap.go).
	gaps []Gap
	// held, while set, gathers the cursor's move over several Change
	// Lists read as one; readIndexToo says a Change List Index was read.
	held         *heldAdvance
	readIndexToo bool
	// discovered is set when this pass ran discovery already.
	discovered bool
}

// collection is where the changes of the set being harvested go.
func (p *pass) collection() string {
	if p.cs != nil {
		return p.cs.Collection
	}
	return p.src.Collection
}

// capabilities are the documents a Capability List offers, by capability,
// in document order: a Capability List may name several of one capability
// (WEKO names a Resource List and a Resource Dump per index), and every
// one is read.
type capabilities map[string][]string

// first is the first document offered for capability c, "" if none.
func (c capabilities) first(name string) string {
	if v := c[name]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func (h *Harvester) pass(ctx context.Context, s *source, sl *slot) error {
	p := &pass{h: h, src: s, client: s.client, policy: s.policy, slot: sl, log: h.log.With("source", s.Name, "collection", s.Collection)}
	start := time.Now()
	parent := ctx
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	p.watch = newProgressWatch(h.cfg.ProgressTimeout, stop)
	ctx, span := h.startPass(ctx, s)
	err := stalledPass(ctx, s.Name, p.do(ctx))
	endSpan(span, err)
	p.logRefusals()
	h.ctl.findings(s.Name, p.endTolerances(), p.gaps)
	h.m.lag(s.Name, p.st.changes) // as far as it durably got, even when failing
	if err != nil && errors.Is(parent.Err(), context.Canceled) {
		// The node is stopping (a pass that outlasts pass_timeout ends
		// with DeadlineExceeded, and fails): the pass resumes from its
		// cursors at the next start, and nothing failed.
		p.log.Info("pass stopped", "reason", context.Cause(parent), "took", time.Since(start))
		return err
	}
	if err != nil {
		h.m.ended(s.Name, false)
		p.log.Error("pass failed", "err", err, "took", time.Since(start))
		return err
	}
	p.passed(ctx)
	p.deadLetters(ctx)
	h.m.ended(s.Name, true)
	p.log.Debug("pass done", "took", time.Since(start))
	return nil
}

// baselineDue: no baseline has completed yet, the Source offers no Change
// List to follow, or the baseline schedule has come round since the last.
func (p *pass) baselineDue(hasChangeList bool) bool {
	switch {
	case p.st.baseline.IsZero(), !hasChangeList:
		return true
	case p.src.baseline == nil:
		return false
	}
	return !p.src.baseline.Next(p.st.baseline).After(time.Now())
}

// capabilities reads the Capability List of the set being harvested. When
// the primary set's remembered Capability List fails, discovery runs
// again once and the one it finds becomes the primary set.
func (p *pass) capabilities(ctx context.Context) (capabilities, error) {
	caps, err := p.readCapabilities(ctx, p.cs.URI)
	if err == nil || ctx.Err() != nil || p.cs.Key != "" || p.discovered {
		return caps, err
	}
	p.log.Warn("remembered Capability List failed, discovering again", "uri", p.cs.URI, "err", err)
	d, derr := p.discoverAll(ctx)
	if derr != nil {
		return nil, derr
	}
	uri := p.pickPrimary(d)
	if caps, err = p.readCapabilities(ctx, uri); err != nil {
		return nil, err
	}
	p.cs.URI = uri
	if err := p.set(ctx, curCapabilities, uri); err != nil {
		return nil, err
	}
	return caps, p.set(ctx, curDescription, cmp.Or(d.listsFrom(), noDescription))
}

// readCapabilities reads a Capability List: the first document offered for
// each capability.
func (p *pass) readCapabilities(ctx context.Context, uri string) (capabilities, error) {
	d, err := p.open(ctx, uri, validators{})
	if err != nil {
		return nil, err
	}
	defer d.Close()
	if k := d.r.Header().Kind(); k != resourcesync.KindCapabilityList {
		p.h.m.errors.WithLabelValues(p.src.Name, kindDocument).Inc()
		return nil, fmt.Errorf("source %s: %s is a %s, not a Capability List", p.src.Name, uri, k)
	}
	caps := capabilities{}
	for {
		e, err := p.next(d)
		if err != nil {
			if errors.Is(err, errEOF) {
				return caps, nil
			}
			return nil, err
		}
		if e.MD == nil || e.MD.Capability == "" {
			p.tolerate(uri, tolNoCapability, 1)
			continue
		}
		name := strings.ToLower(e.MD.Capability)
		if name != e.MD.Capability {
			p.tolerate(uri, tolCapabilityCase, 1)
		}
		if name == capChangeListIndex {
			name = resourcesync.CapChangeList // DSpace names its Change List Index so
			p.tolerate(uri, tolChangeListIndexEntry, 1)
		}
		if name == resourcesync.CapChangeNotification {
			if p.cs.Key == "" {
				p.noteChannel(uri, e)
			}
		}
		loc := resolve(uri, e.Loc)
		if len(caps[name]) > 0 {
			p.tolerate(uri, tolDuplicateCapability, 1)
		}
		if !slices.Contains(caps[name], loc) {
			caps[name] = append(caps[name], loc)
		}
	}
}

// publish queues one change; it is durable when publish returns nil.
func (p *pass) publish(ctx context.Context, c *viaduct.Change) error {
	p.h.m.attempts.WithLabelValues(p.src.Name).Inc()
	if err := p.h.deps.Publisher.PublishChange(ctx, c); err != nil {
		p.h.m.errors.WithLabelValues(p.src.Name, kindPublish).Inc()
		return fmt.Errorf("source %s: queue %s change of %s read from %s: %w", p.src.Name, c.Op, c.URI, c.Doc, err)
	}
	p.h.m.changes.WithLabelValues(p.src.Name, c.Op).Inc()
	return nil
}

// change is the Change an entry of document doc states, at time t.
func (p *pass) change(doc string, e *resourcesync.Entry, op string, t time.Time) *viaduct.Change {
	c := &viaduct.Change{
		Source:     p.src.Name,
		Collection: p.collection(),
		URI:        e.Loc,
		Op:         op,
		Time:       t,
		Modified:   e.LastMod,
		Links:      e.Links,
		Doc:        doc,
	}
	if e.MD != nil {
		c.Hash, c.Length, c.Type = e.MD.Hash, e.MD.Length, e.MD.Type
	}
	return c
}
