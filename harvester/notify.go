package harvester

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/websub"
)

// Push receives the configured Sources' change notifications: it
// subscribes to the hub each Source's Capability List names, answers the
// hubs' verifications and renews leases (through a websub.Subscriber),
// turns each notification into Changes by the same rules as a Change List,
// and, when notifications stop covering consecutive intervals or stop
// arriving, catches up by running a pass over the Source. Its goroutines
// are stopped by Close.
type Push struct {
	h   *Harvester
	cfg PushConfig
	sub *websub.Subscriber
	tr  *websub.Tracker
	log *slog.Logger

	mu      sync.Mutex
	chans   map[string]*channel  // by Source name
	byID    map[string]string    // Source name by subscription ID
	pending map[string]catchUp   // catch-ups asked for, by Source name
	heard   map[string]time.Time // last notification taken, by Source name

	kick   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
}

var _ http.Handler = (*Push)(nil)

// channel is a Source's notification channel and what is known of it.
type channel struct {
	subRecord
	// covered: every change up to the Tracker's until has been queued, so
	// a consecutive notification may move the change cursor.
	covered bool
	// lastPass is when the last pass over the Source ended well.
	lastPass time.Time
}

// subRecord is a subscription as kept in the Source's cursors, so that a
// restarted node subscribes again under the same callback and secret.
type subRecord struct {
	Hub    string `json:"hub"`
	Topic  string `json:"topic"`
	ID     string `json:"id"`
	Secret string `json:"secret"`
}

// catchUp is a pass asked for, and why.
type catchUp struct {
	topic, reason string
}

// Names of the push cursors of a Source.
const (
	curSubscription = "notify.subscription"
	curNotified     = "notify.until"
)

// StartPush starts receiving notifications. callbackBase is where the
// returned Push (an http.Handler) is mounted, used when the configuration
// names none; it must end in "/". Subscriptions kept from before a restart
// are renewed now; others are made by the next pass over each Source.
func (h *Harvester) StartPush(ctx context.Context, callbackBase string, opts websub.SubscriberOptions) (*Push, error) {
	cfg := h.cfg.PushConfig
	if cfg.Subscriber.CallbackBase == "" {
		cfg.Subscriber.CallbackBase = callbackBase
	}
	if opts.Logger == nil {
		opts.Logger = h.log
	}
	p := &Push{h: h, cfg: cfg, tr: websub.NewTracker(cfg.QuietWindow, nil), log: h.log,
		chans: map[string]*channel{}, byID: map[string]string{}, pending: map[string]catchUp{}, heard: map[string]time.Time{},
		kick: make(chan struct{}, 1), done: make(chan struct{})}
	sub, err := websub.NewSubscriber(cfg.Subscriber, opts, p.notify)
	if err != nil {
		return nil, fmt.Errorf("harvester: %w", err)
	}
	p.sub = sub
	for _, src := range h.sourceList() {
		if err := p.restore(ctx, src); err != nil {
			h.log.Warn("subscription kept from before could not be renewed; the next pass subscribes again", "source", src.Name, "err", err)
		}
	}
	h.mu.Lock()
	h.push = p
	h.mu.Unlock()
	var runCtx context.Context
	runCtx, p.cancel = context.WithCancel(context.WithoutCancel(ctx))
	go p.loop(runCtx)
	return p, nil
}

// ServeHTTP is every subscription's callback.
func (p *Push) ServeHTTP(w http.ResponseWriter, r *http.Request) { p.serveCounted(w, r) }

// Close stops catch-ups and renewals. Subscriptions are kept, to be
// renewed by the next StartPush.
func (p *Push) Close() error {
	p.h.mu.Lock()
	if p.h.push == p {
		p.h.push = nil
	}
	p.h.mu.Unlock()
	p.cancel()
	<-p.done
	return p.sub.Close()
}

// SourceBook is the catalog's list of Sources, which tells a node what
// was configured before it restarted.
type SourceBook interface {
	Sources(ctx context.Context) ([]catalog.Source, error)
	UpsertSource(ctx context.Context, s catalog.Source) error
}

var _ SourceBook = (*catalog.Catalog)(nil)

// Reconcile compares the configured Sources with those the catalog
// remembers: a Source no longer configured is marked removed and its
// subscription, if any, ended; the configured ones are recorded.
func (p *Push) Reconcile(ctx context.Context, book SourceBook) error {
	known, err := book.Sources(ctx)
	if err != nil {
		return fmt.Errorf("harvester: reconciling Sources with the catalog: %w", err)
	}
	now := time.Now()
	byName := map[string]catalog.Source{}
	for _, s := range known {
		byName[s.Name] = s
		if _, ok := p.h.source(s.Name); ok || !s.Removed.IsZero() {
			continue
		}
		if err := p.unsubscribeKept(ctx, s.Name); err != nil {
			p.log.Warn("ending the subscription of a removed Source", "source", s.Name, "err", err)
		}
		s.Removed = now
		if err := book.UpsertSource(ctx, s); err != nil {
			return fmt.Errorf("harvester: marking Source %s removed: %w", s.Name, err)
		}
		p.log.Info("Source no longer configured, marked removed", "source", s.Name, "collection", s.Collection)
	}
	for _, s := range p.h.sourceList() {
		name := s.Name
		rec := catalog.Source{Name: name, BaseURI: s.URL, Collection: s.Collection, Added: now}
		if old, ok := byName[name]; ok {
			rec.Added = old.Added
		}
		if err := book.UpsertSource(ctx, rec); err != nil {
			return fmt.Errorf("harvester: recording Source %s: %w", name, err)
		}
	}
	return nil
}

// ask queues a catch-up pass over the Source, logging why.
func (p *Push) ask(name string, c catchUp, msg string, args ...any) {
	p.log.Info(msg, append([]any{"source", name, "topic", c.topic}, args...)...)
	p.mu.Lock()
	if _, ok := p.pending[name]; !ok {
		p.pending[name] = c
	}
	p.mu.Unlock()
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// loop runs the catch-ups asked for and looks for quiet hubs.
func (p *Push) loop(ctx context.Context) {
	defer close(p.done)
	var tick <-chan time.Time
	if q := p.cfg.QuietWindow; q > 0 {
		t := time.NewTicker(max(q/4, 10*time.Millisecond))
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.kick:
		case <-tick:
			p.checkQuiet()
		}
		p.mu.Lock()
		todo := p.pending
		p.pending = map[string]catchUp{}
		p.mu.Unlock()
		for _, name := range p.h.Sources() {
			if c, ok := todo[name]; ok && ctx.Err() == nil {
				p.runCatchUp(ctx, name, c)
			}
		}
	}
}

// checkQuiet asks a catch-up for every subscribed topic that has been
// quiet for longer than the window, and starts its window again.
func (p *Push) checkQuiet() {
	quiet := p.tr.Quiet()
	if len(quiet) == 0 {
		return
	}
	p.mu.Lock()
	byTopic := map[string]string{}
	for name, ch := range p.chans {
		if ch.ID != "" {
			byTopic[ch.Topic] = name
		}
	}
	p.mu.Unlock()
	for _, topic := range quiet {
		p.tr.Seed(topic, time.Time{}) // marks it heard from now
		if name, ok := byTopic[topic]; ok {
			p.ask(name, catchUp{topic: topic, reason: "quiet"},
				fmt.Sprintf("no notification on topic %s for %s: polling Change List", topic, p.cfg.QuietWindow))
		}
	}
}

// runCatchUp runs a pass over the Source and says what it caught up.
func (p *Push) runCatchUp(ctx context.Context, name string, c catchUp) {
	s, ok := p.h.source(name)
	if !ok {
		return // removed since the catch-up was asked for
	}
	before, _ := p.h.deps.Cursors.Cursor(ctx, name, curChanges)
	if err := p.h.run(ctx, s, false); err != nil {
		if ctx.Err() == nil {
			// The pass has logged its error; this only says why it ran.
			p.log.Debug("catching up from the Change List failed; the next notification or poll tries again", "source", name, "topic", c.topic, "reason", c.reason)
		}
		return
	}
	after, _ := p.h.deps.Cursors.Cursor(ctx, name, curChanges)
	p.log.Info("caught up from the Change List", "source", name, "topic", c.topic, "reason", c.reason, "from", before, "to", after)
	p.h.m.notify.catchUps.WithLabelValues(name, c.reason).Inc()
}

// errNoSource answers a notification whose subscription no Source owns.
var errNoSource = errors.New("no configured Source owns this subscription")

// notify takes one verified notification: under the Source's lock, so
// that it is ordered with passes, it classifies the interval, queues the
// entries, moves the cursor when that is safe and asks for a catch-up
// when something may be missing.
func (p *Push) notify(ctx context.Context, sub websub.Sub, hd *resourcesync.Header, entries []*resourcesync.Entry) error {
	p.mu.Lock()
	name, ok := p.byID[sub.ID]
	p.mu.Unlock()
	if !ok {
		return fmt.Errorf("notification on %s: %w", sub.Topic, errNoSource)
	}
	s, ok := p.h.source(name)
	if !ok {
		return fmt.Errorf("notification on %s: %w", sub.Topic, errNoSource)
	}
	if err := lockCtx(ctx, &s.mu); err != nil {
		return fmt.Errorf("source %s: notification on %s waited for a pass: %w", name, sub.Topic, err)
	}
	defer s.mu.Unlock()
	return p.apply(ctx, s, sub.Topic, hd, entries)
}

// lockCtx takes mu, giving up when ctx ends.
func lockCtx(ctx context.Context, mu *sync.Mutex) error {
	for !mu.TryLock() {
		t := time.NewTimer(2 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}
