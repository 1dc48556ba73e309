package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/websub"
)

// Paths of the Source's change notification channel, served once a Hub
// is started.
const (
	PathHub   = "/hub"
	PathTopic = "/changenotification"
)

// HubConfig tunes the simulated Source's hub.
type HubConfig struct {
	// Window is how long changes are gathered into one notification.
	// Default 10 ms.
	Window time.Duration
	// RetryMin is the hub's first wait after a failed delivery. Default
	// 100 ms, so that tests of retries stay fast.
	RetryMin time.Duration
	// Untimed leaves lastmod and rs:md datetime out of every entry of a
	// notification, as Change Notification 1.0.1 allows; the
	// notification's from and until stay.
	Untimed bool
}

// Hub pushes the Source's changes as ResourceSync change notifications:
// a websub.Hub served at PathHub, one topic at PathTopic, advertised in the
// Capability List. Each window's changes become one notification whose
// from is the previous one's until, so consecutive notifications cover
// consecutive intervals unless a fault (see DropNext, SwapNext, Stop) says
// otherwise. Close stops it.
type Hub struct {
	src     *Source
	hub     *websub.Hub
	topic   string
	window  time.Duration
	untimed bool
	log     *slog.Logger

	mu      sync.Mutex
	pending []Change
	until   time.Time // until of the last notification made
	made    int
	faults  hubFaults

	kick   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
}

// StartHub starts a hub for src, whose base URL must be known (Listen
// fixes it), and makes src advertise it. log nil discards.
func StartHub(ctx context.Context, src *Source, cfg HubConfig, log *slog.Logger) (*Hub, error) {
	base := src.BaseURL()
	if base == "" {
		return nil, errors.New("simulated Source: a hub needs the Source's base URL; Listen first")
	}
	if cfg.Window <= 0 {
		cfg.Window = 10 * time.Millisecond
	}
	if cfg.RetryMin <= 0 {
		cfg.RetryMin = 100 * time.Millisecond
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	wh, err := websub.NewHub(ctx, websub.HubConfig{URL: base + PathHub, RetryMin: cfg.RetryMin, RetryMax: 10 * cfg.RetryMin},
		websub.HubOptions{Store: websub.NewMemStore(), Outbox: websub.NewMemOutbox(), Policy: websub.AllowAllCallbacks, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("simulated Source: starting hub: %w", err)
	}
	h := &Hub{src: src, hub: wh, topic: base + PathTopic, window: cfg.Window, untimed: cfg.Untimed, log: log,
		until: time.Unix(0, src.lastChange()).Add(time.Microsecond).UTC(), kick: make(chan struct{}, 1), done: make(chan struct{})}
	wh.AddTopic(h.topic)
	var runCtx context.Context
	runCtx, h.cancel = context.WithCancel(context.WithoutCancel(ctx))
	go h.loop(runCtx)
	src.OnChange(h.onChange)
	src.hub.Store(h)
	return h, nil
}

// URL is the hub's URL; Topic the Source's change notification topic.
func (h *Hub) URL() string   { return h.hub.URL() }
func (h *Hub) Topic() string { return h.topic }

// Subscribers counts the verified subscriptions, so that a test can wait
// for its subscriber before making changes.
func (h *Hub) Subscribers() int { return len(h.hub.Subscriptions()) }

// Close stops notifying and the hub's deliveries, and withdraws the
// channel from the Capability List.
func (h *Hub) Close() error {
	h.src.OnChange(nil)
	h.src.hub.CompareAndSwap(h, nil)
	h.cancel()
	<-h.done
	return h.hub.Close()
}

func (h *Hub) onChange(c Change) {
	h.mu.Lock()
	h.pending = append(h.pending, c)
	h.mu.Unlock()
	select {
	case h.kick <- struct{}{}:
	default:
	}
}

// loop waits for a change, lets the window fill, and publishes.
func (h *Hub) loop(ctx context.Context) {
	defer close(h.done)
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.kick:
		}
		t := time.NewTimer(h.window)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if err := h.flush(ctx); err != nil && ctx.Err() == nil {
			h.log.Error("simulated hub: publishing a notification", "source", h.src.BaseURL(), "err", err)
		}
	}
}

// flush turns the pending changes into one notification covering
// [previous until, last change + 1 µs) and publishes it, unless a fault
// holds or drops it.
func (h *Hub) flush(ctx context.Context) error {
	h.mu.Lock()
	batch := h.pending
	h.pending = nil
	if len(batch) == 0 {
		h.mu.Unlock()
		return nil
	}
	from := h.until
	until := batch[len(batch)-1].Time.Add(time.Microsecond).UTC()
	h.until = until
	h.made++
	h.mu.Unlock()
	entries := make([]*resourcesync.Entry, 0, len(batch))
	for _, c := range batch {
		e, err := h.src.Entry(c)
		if err != nil {
			return err
		}
		if h.untimed {
			e.LastMod, e.MD.DateTime = time.Time{}, time.Time{}
		}
		entries = append(entries, &e)
	}
	payload, err := websub.EncodeNotification(from, until, h.src.BaseURL()+PathCapabilities, entries)
	if err != nil {
		return fmt.Errorf("encoding the notification of [%s, %s): %w", resourcesync.FormatTime(from), resourcesync.FormatTime(until), err)
	}
	for _, p := range h.faults.route(payload, time.Now()) {
		if err := h.hub.Publish(ctx, h.topic, p); err != nil {
			return err
		}
	}
	return nil
}

// serveChannel answers the hub's and the topic's requests.
func (h *Hub) serveChannel(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == PathTopic {
		h.hub.TopicHandler(h.topic).ServeHTTP(w, r)
		return
	}
	h.hub.ServeHTTP(w, r)
}

// entry is the Capability List's entry for the channel.
func (h *Hub) entry() resourcesync.Entry {
	return resourcesync.Entry{
		Loc:   h.topic,
		MD:    &resourcesync.MD{Capability: resourcesync.CapChangeNotification},
		Links: []resourcesync.Link{{Rel: "hub", Href: h.hub.URL()}},
	}
}

// lastChange is the time of the Source's latest change (its epoch when
// none), unix nanoseconds.
func (s *Source) lastChange() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.last
}

// channelEntries are the Capability List entries of a running hub.
func (s *Source) channelEntries() []resourcesync.Entry {
	if h := s.hub.Load(); h != nil {
		return []resourcesync.Entry{h.entry()}
	}
	return nil
}

// channelHandler is the running hub's handler for path p, or nil.
func (s *Source) channelHandler(p string) http.Handler {
	if h := s.hub.Load(); h != nil && (p == PathHub || p == PathTopic) {
		return http.HandlerFunc(h.serveChannel)
	}
	return nil
}

// Made counts the notifications the hub has made, delivered or not, so
// that a test can wait for one window to close before the next.
func (h *Hub) Made() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.made
}

// Subscriptions lists the hub's verified subscriptions, secrets included,
// so that a test can forge notifications.
func (h *Hub) Subscriptions() []websub.Subscription { return h.hub.Subscriptions() }
