package harvester

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
}

// capabilities are the documents a Capability List offers, by capability.
type capabilities map[string]string

func (h *Harvester) pass(ctx context.Context, s *source, sl *slot) error {
	p := &pass{h: h, src: s, client: s.client, policy: s.policy, slot: sl, log: h.log.With("source", s.Name, "collection", s.Collection)}
	start := time.Now()
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	p.watch = newProgressWatch(h.cfg.ProgressTimeout, stop)
	ctx, span := h.startPass(ctx, s)
	err := stalledPass(ctx, s.Name, p.do(ctx))
	endSpan(span, err)
	p.logRefusals()
	h.m.lag(s.Name, p.st.changes) // as far as it durably got, even when failing
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

func (p *pass) do(ctx context.Context) error {
	if err := p.loadState(ctx); err != nil {
		return err
	}
	caps, err := p.capabilities(ctx)
	if err != nil {
		return err
	}
	p.channel(ctx)
	hasChanges := caps[resourcesync.CapChangeList] != "" || p.dumpsUsable(caps[resourcesync.CapChangeDump])
	if p.baselineDue(hasChanges) {
		if err := p.baselineAny(ctx, caps, hasChanges); err != nil {
			return err
		}
	}
	if hasChanges {
		return p.changesAny(ctx, caps)
	}
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

// capabilities reads the Source's Capability List, found by discovery and
// remembered in a cursor; when the remembered one fails, discovery runs
// again once.
func (p *pass) capabilities(ctx context.Context) (capabilities, error) {
	uri, err := p.h.deps.Cursors.Cursor(ctx, p.src.Name, curCapabilities)
	if err != nil {
		return nil, fmt.Errorf("source %s: read cursor %s: %w", p.src.Name, curCapabilities, err)
	}
	if uri != "" {
		caps, err := p.readCapabilities(ctx, uri)
		if err == nil || ctx.Err() != nil {
			return caps, err
		}
		p.log.Warn("remembered Capability List failed, discovering again", "uri", uri, "err", err)
	}
	if uri, err = p.discover(ctx); err != nil {
		return nil, err
	}
	caps, err := p.readCapabilities(ctx, uri)
	if err != nil {
		return nil, err
	}
	return caps, p.set(ctx, curCapabilities, uri)
}

// discover finds the Capability List from the configured URL. A Source
// Description with several Capability Lists gives the one at the URL if
// that is one of them, else the first: one configured Source is one
// collection, and a Source with several is configured once per list.
func (p *pass) discover(ctx context.Context) (string, error) {
	d, err := Discover(ctx, p.client, p.src.Name, p.src.URL)
	if err != nil {
		p.h.m.errors.WithLabelValues(p.src.Name, kindDiscovery).Inc()
		return "", fmt.Errorf("source %s: %w", p.src.Name, err)
	}
	if len(d.CapabilityLists) == 0 {
		p.h.m.errors.WithLabelValues(p.src.Name, kindDiscovery).Inc()
		return "", fmt.Errorf("source %s: Source Description %s lists no Capability List", p.src.Name, d.SourceDescription)
	}
	for _, cl := range d.CapabilityLists {
		if cl.URI == p.src.URL {
			return cl.URI, nil
		}
	}
	if len(d.CapabilityLists) > 1 {
		p.log.Warn("Source Description lists several Capability Lists, harvesting the first", "uri", d.SourceDescription, "capabilitylist", d.CapabilityLists[0].URI)
	}
	return d.CapabilityLists[0].URI, nil
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
			continue
		}
		if e.MD.Capability == resourcesync.CapChangeNotification {
			p.noteChannel(uri, e)
		}
		if _, dup := caps[e.MD.Capability]; !dup {
			caps[e.MD.Capability] = resolve(uri, e.Loc)
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
		Collection: p.src.Collection,
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
