package harvester

import (
	"context"
	"fmt"
	"reflect"

	"github.com/robfig/cron/v3"
	"github.com/viaduct-mirror/viaduct/upstream"
)

// source returns the named Source's current settings.
func (h *Harvester) source(name string) (*source, bool) {
	h.srcMu.RLock()
	defer h.srcMu.RUnlock()
	s, ok := h.sources[name]
	return s, ok
}

// sourceList returns the Sources in configuration order.
func (h *Harvester) sourceList() []*source {
	h.srcMu.RLock()
	defer h.srcMu.RUnlock()
	out := make([]*source, 0, len(h.order))
	for _, name := range h.order {
		out = append(out, h.sources[name])
	}
	return out
}

// newSource resolves one Source's settings and builds its Policy and
// Client; sc has been validated.
func (h *Harvester) newSource(sc SourceConfig) (*source, error) {
	r, err := h.cfg.resolve(sc)
	if err != nil {
		return nil, fmt.Errorf("harvester config: %w", err)
	}
	ucfg := h.deps.Upstream
	ucfg.AllowedAuthorities = append(append([]string(nil), ucfg.AllowedAuthorities...), sc.Authorities...)
	ucfg.AllowLoopback, ucfg.AllowPrivate = r.loopback, r.private
	p, err := upstream.NewPolicy(sc.URL, ucfg)
	if err != nil {
		return nil, fmt.Errorf("harvester: source %q: %w", sc.Name, err)
	}
	return &source{resolved: r, policy: p, client: h.deps.Client.WithPolicy(p), refusals: newRefusalLog()}, nil
}

// schedule adds s's polling job to c; the caller holds ctl.mu.
func (h *Harvester) schedule(ctx context.Context, c *cron.Cron, s *source) {
	if h.ctl.entries == nil {
		h.ctl.entries = map[string]cron.EntryID{}
	}
	name := s.Name
	h.ctl.entries[name] = c.Schedule(s.schedule, cron.FuncJob(func() {
		cur, ok := h.source(name)
		if !ok || h.skipPoll(cur) {
			return // removed, or notifications keep it up to date
		}
		// A failed pass has logged its error already: one error, one line.
		_ = h.run(ctx, cur, true)
	}))
	h.firstPass(ctx, s)
}

// firstPass starts a pass at once over a Source never harvested, rather
// than at its first schedule tick, when ImmediateFirstPass is set.
func (h *Harvester) firstPass(ctx context.Context, s *source) {
	if !h.cfg.ImmediateFirstPass {
		return
	}
	for _, cur := range []string{curBaseline, curChanges} {
		if v, err := h.deps.Cursors.Cursor(ctx, s.Name, cur); err != nil || v != "" {
			return
		}
	}
	t := h.ctl.track(s.Name)
	if t.pending != nil {
		return
	}
	h.log.Info("source never harvested: first pass now", "source", s.Name, "collection", s.Collection)
	req := &Request{done: make(chan struct{})}
	t.pending = req
	go h.serveRequest(ctx, s, req)
}

// ReloadResult says what a reload changed, by Source name.
type ReloadResult struct {
	Added     []string `json:"added"`
	Removed   []string `json:"removed"`
	Changed   []string `json:"changed"`
	Unchanged int      `json:"unchanged"`
}

// Reload replaces the configured Sources without stopping the harvester:
// added Sources are scheduled (and, never harvested, get their first pass
// now), removed ones are no longer polled (a pass under way ends on its
// own), and a changed one takes its new settings once its pass under way,
// if any, has ended. Nothing changes when any Source is invalid.
func (h *Harvester) Reload(sources []SourceConfig) (ReloadResult, error) {
	var res ReloadResult
	if err := h.cfg.ValidateSources(sources); err != nil {
		return res, fmt.Errorf("harvester: reload: %w", err)
	}
	next := make(map[string]*source, len(sources))
	order := make([]string, 0, len(sources))
	for _, sc := range sources {
		s, err := h.newSource(sc)
		if err != nil {
			return res, fmt.Errorf("harvester: reload: %w", err)
		}
		next[sc.Name], order = s, append(order, sc.Name)
	}

	h.ctl.mu.Lock()
	defer h.ctl.mu.Unlock()
	h.mu.Lock()
	c := h.cron
	h.mu.Unlock()
	ctx := h.ctl.runCtx

	h.srcMu.Lock()
	old := h.sources
	var swapLater []*source
	for _, name := range order {
		prev, ok := old[name]
		switch {
		case !ok:
			res.Added = append(res.Added, name)
		case reflect.DeepEqual(prev.SourceConfig, next[name].SourceConfig):
			next[name] = prev // keep its lock and any pass under way
			res.Unchanged++
		default:
			res.Changed = append(res.Changed, name)
			next[name] = prev // until its pass under way ends
			swapLater = append(swapLater, prev)
		}
	}
	for _, name := range h.order {
		if _, ok := next[name]; !ok {
			res.Removed = append(res.Removed, name)
		}
	}
	changed := map[string]*source{}
	for _, prev := range swapLater {
		s, _ := h.newSource(sourceConfigOf(sources, prev.Name))
		changed[prev.Name] = s
	}
	h.sources, h.order = next, order
	h.srcMu.Unlock()

	if c != nil {
		for _, name := range res.Removed {
			c.Remove(h.ctl.entries[name])
			delete(h.ctl.entries, name)
		}
		for _, name := range res.Added {
			h.schedule(ctx, c, next[name])
		}
	}
	for _, name := range res.Added {
		h.m.declare(name)
	}
	for _, prev := range swapLater {
		go h.swap(ctx, c, prev, changed[prev.Name])
	}
	h.log.Info("sources reloaded", "added", res.Added, "removed", res.Removed, "changed", res.Changed, "unchanged", res.Unchanged)
	return res, nil
}

// swap puts s in place of prev once prev's pass under way has ended, and
// reschedules it.
func (h *Harvester) swap(ctx context.Context, c *cron.Cron, prev, s *source) {
	if ctx != nil {
		if err := lockCtx(ctx, &prev.mu); err != nil {
			return
		}
	} else {
		prev.mu.Lock()
	}
	defer prev.mu.Unlock()
	h.ctl.mu.Lock()
	defer h.ctl.mu.Unlock()
	h.srcMu.Lock()
	if h.sources[prev.Name] != prev {
		h.srcMu.Unlock()
		return // removed or replaced again meanwhile
	}
	h.sources[prev.Name] = s
	h.srcMu.Unlock()
	if c != nil {
		c.Remove(h.ctl.entries[prev.Name])
		h.schedule(ctx, c, s)
	}
	h.log.Info("source settings changed", "source", s.Name, "url", s.URL, "schedule", s.Schedule)
}

func sourceConfigOf(sources []SourceConfig, name string) SourceConfig {
	for _, sc := range sources {
		if sc.Name == name {
			return sc
		}
	}
	return SourceConfig{}
}
