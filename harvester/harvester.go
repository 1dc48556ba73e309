package harvester

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/robfig/cron/v3"
	"github.com/viaduct-mirror/viaduct/upstream"
)

// Harvester polls the configured Sources on their schedules and queues what
// they changed. One Source's failure never stops the others.
type Harvester struct {
	cfg     Config
	deps    Deps
	log     *slog.Logger
	m       *metrics
	srcMu   sync.RWMutex // guards sources and order, which Reload replaces
	sources map[string]*source
	order   []string
	sem     chan struct{} // bounds the Sources polled at once
	due     atomic.Int32  // passes running or waiting for a slot
	backlog backlogView   // shared by the passes waiting on the workers
	ctl     control
	dead    deadScans // where each Source's last look at its dead letters ended
	tol     tolerations

	mu     sync.Mutex
	cron   *cron.Cron // set while Run runs
	closed bool
	push   *Push // set by StartPush
}

// source is one configured Source and what the harvester keeps for it
// between passes.
type source struct {
	*resolved
	policy *upstream.Policy
	client *upstream.Client
	mu     sync.Mutex // one pass at a time, whoever starts it
	// refusals remembers the entries refused at the last pass, so that
	// the same ones are not logged again.
	refusals *refusalLog
}

// New checks cfg and sources and builds a Harvester. deps must all be set.
// A nil logger discards; a nil registerer registers no metrics.
func New(cfg Config, sources []SourceConfig, deps Deps, logger *slog.Logger, reg prometheus.Registerer) (*Harvester, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("harvester config: %w", err)
	}
	if err := cfg.ValidateSources(sources); err != nil {
		return nil, fmt.Errorf("harvester config: %w", err)
	}
	if deps.Client == nil || deps.Cursors == nil || deps.Held == nil || deps.Publisher == nil {
		return nil, errors.New("harvester: Client, Cursors, Held and Publisher are all required")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	m, err := newMetrics(reg)
	if err != nil {
		return nil, fmt.Errorf("harvester: register metrics: %w", err)
	}
	h := &Harvester{cfg: cfg, deps: deps, log: logger, m: m, sources: map[string]*source{}, sem: make(chan struct{}, cfg.Concurrency)}
	h.ctl.started = make(chan struct{})
	for _, sc := range sources {
		src, err := h.newSource(sc)
		if err != nil {
			return nil, err
		}
		h.sources[sc.Name] = src
		h.order = append(h.order, sc.Name)
		m.declare(sc.Name)
	}
	return h, nil
}

// SyncOnce runs one pass over the named Source now, waiting for a pass
// already under way to end first.
func (h *Harvester) SyncOnce(ctx context.Context, name string) error {
	s, ok := h.source(name)
	if !ok {
		return fmt.Errorf("harvester: source %q: %w", name, ErrNoSource)
	}
	return h.run(ctx, s, false)
}

// run runs one pass over s under the concurrency bound. wait false makes
// a scheduled pass give way when another pass over s is under way.
func (h *Harvester) run(ctx context.Context, s *source, skipIfBusy bool) error {
	if skipIfBusy {
		if !s.mu.TryLock() {
			h.log.Info("pass still under way, skipped", "source", s.Name)
			return nil
		}
	} else {
		s.mu.Lock()
	}
	defer s.mu.Unlock()
	return h.bounded(ctx, s, false)
}

// Run polls every Source on its schedule until ctx ends. A job never
// overlaps itself: a pass still under way when the next is due is skipped.
func (h *Harvester) Run(ctx context.Context) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return errors.New("harvester: closed")
	}
	if h.cron != nil {
		h.mu.Unlock()
		return errors.New("harvester: already running")
	}
	c := cron.New(cron.WithParser(cronParser), cron.WithChain(cron.SkipIfStillRunning(cron.DiscardLogger)))
	h.cron = c
	h.mu.Unlock()
	h.ctl.mu.Lock()
	h.ctl.runCtx = ctx
	for _, s := range h.sourceList() {
		h.schedule(ctx, c, s)
	}
	h.ctl.mu.Unlock()
	h.ctl.startedOnce.Do(func() { close(h.ctl.started) })
	h.primeCursors(ctx)
	c.Start()
	<-ctx.Done()
	<-c.Stop().Done() // waits for passes under way, which see ctx's end
	h.mu.Lock()
	h.cron = nil
	h.mu.Unlock()
	return nil
}

// Close releases what the Harvester holds. It does not stop Run: cancel
// Run's context for that. The Client and catalog belong to the caller.
func (h *Harvester) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	return nil
}

// Sources names the configured Sources, in configuration order.
func (h *Harvester) Sources() []string {
	h.srcMu.RLock()
	defer h.srcMu.RUnlock()
	return append([]string(nil), h.order...)
}
