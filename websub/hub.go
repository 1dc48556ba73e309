package websub

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"go.opentelemetry.io/otel/trace"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
)

// ErrUnknownTopic is returned for a topic the Hub's owner has not added.
var ErrUnknownTopic = errors.New("unknown topic")

// Hub is a WebSub hub for the topics its owner adds: it takes subscribe
// and unsubscribe requests (ServeHTTP), verifies them, and delivers what
// the owner publishes to each verified subscriber, in order, until its
// lease ends. Its goroutines (verifications, one delivery loop per
// subscription) are stopped by Close.
type Hub struct {
	cfg    HubConfig
	store  Store
	outbox Outbox
	client *http.Client
	policy CallbackPolicy
	clock  Clock
	log    *slog.Logger
	tp     trace.TracerProvider

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// change serialises what alters subscriptions and queues (store,
	// outbox, subs), so that a publication never lands in the queue of a
	// subscription being removed.
	change sync.Mutex

	mu      sync.Mutex
	topics  map[string]bool
	subs    map[string]*worker
	pending int
	closed  bool
	// revs holds, per subscription (ended ones too), the revision of the
	// last change this hub applied from its Store's feed or made itself
	// (Follow).
	revs map[string]uint64
}

var (
	_ http.Handler = (*Hub)(nil)
	_ Publisher    = (*Hub)(nil)
)

// NewHub returns a Hub with the subscriptions of opts.Store: expired ones
// are deleted with their queues, the others resume delivering what their
// Outbox queues hold.
func NewHub(ctx context.Context, cfg HubConfig, opts HubOptions) (*Hub, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if opts.Store == nil || opts.Outbox == nil {
		return nil, errors.New("websub hub: Store and Outbox are required")
	}
	h := &Hub{
		cfg: cfg, store: opts.Store, outbox: opts.Outbox,
		client: opts.Client, policy: opts.Policy, clock: opts.Clock, log: opts.Logger, tp: opts.TracerProvider,
		topics: map[string]bool{}, subs: map[string]*worker{}, revs: map[string]uint64{},
	}
	if h.client == nil {
		h.client = noRedirectClient()
	}
	if h.policy == nil {
		h.policy = DefaultCallbackPolicy
	}
	if h.clock == nil {
		h.clock = SystemClock{}
	}
	if h.log == nil {
		h.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	subs, err := h.store.List(ctx)
	if err != nil {
		h.cancel()
		return nil, fmt.Errorf("websub hub: loading subscriptions: %w", err)
	}
	now := h.clock.Now()
	for _, s := range subs {
		if !now.Before(s.Expires) {
			if _, err := h.drop(ctx, s.ID()); err != nil {
				h.cancel()
				return nil, fmt.Errorf("websub hub: dropping expired subscription of %s to %s: %w", s.Callback, s.Topic, err)
			}
			continue
		}
		h.startLocked(s)
	}
	return h, nil
}

// URL is the hub's public URL.
func (h *Hub) URL() string { return h.cfg.URL }

// AddTopic lets subscribers subscribe to topic (an absolute URL).
func (h *Hub) AddTopic(topic string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.topics[topic] = true
}

// RemoveTopic refuses new subscriptions to topic and publications on it.
// Its subscriptions run on until their leases end, with nothing new to
// deliver.
func (h *Hub) RemoveTopic(topic string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.topics, topic)
}

func (h *Hub) hasTopic(topic string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.topics[topic]
}

// Subscribed reports whether topic has a verified subscription whose
// lease has not ended: when it has none, Publish has no one to queue a
// payload for, and a publisher may spare itself building one.
func (h *Hub) Subscribed(topic string) bool {
	now := h.clock.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, w := range h.subs {
		if w.sub.Topic == topic && now.Before(w.sub.Expires) {
			return true
		}
	}
	return false
}

// Subscriptions lists the verified subscriptions, for status pages and
// tests.
func (h *Hub) Subscriptions() []Subscription {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Subscription, 0, len(h.subs))
	for _, w := range h.subs {
		out = append(out, w.sub)
	}
	slices.SortFunc(out, func(a, b Subscription) int { return compareSubs(&a, &b) })
	return out
}

func compareSubs(a, b *Subscription) int {
	return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Callback, b.Callback))
}

// Close stops verifications and deliveries and waits for them. Queued
// deliveries stay in the Outbox for the next Hub.
func (h *Hub) Close() error {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	h.cancel()
	h.wg.Wait()
	return nil
}

// TopicHandler answers HEAD and GET on topic's URL as the spec requires.
func (h *Hub) TopicHandler(topic string) http.Handler { return TopicHandler(topic, h.cfg.URL) }

// TopicHandler answers HEAD and GET on a topic URL with 200, Content-Type
// application/xml, no content, and the Link header naming the topic (self)
// and its hub, which is how a hub or Destination checks the channel.
func TopicHandler(topic, hub string) http.Handler {
	link := linkHeader(topic, hub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Link", link)
		w.Header().Set("Content-Type", "application/xml")
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusOK)
	})
}
