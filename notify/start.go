package notify

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/republish"
	"github.com/viaduct-mirror/viaduct/websub"
)

// Deps are what a node hands its notifications: the stores they read and
// share, and the node's ways of running goroutines and of telling that
// its catalog has caught up with EVENTS.
type Deps struct {
	Queue     *queue.Queue
	Catalog   *catalog.Catalog
	Republish *republish.Server
	// Registry receives the notification metrics; nil registers none.
	Registry prometheus.Registerer
	Log      *slog.Logger
	// TracerProvider makes the hub's spans; nil uses the global one.
	TracerProvider trace.TracerProvider
	// Applied is signalled by the applier after each batch: the notifier
	// publishes then rather than at the end of its window.
	Applied <-chan struct{}
	// Links are the applied events' trace contexts, for the deliveries'
	// span links.
	Links *LinkBook
	// CaughtUp reports whether the catalog has applied every event so
	// far: a node publishes only then.
	CaughtUp func(context.Context) (bool, error)
	// Spawn runs a goroutine owned by the node until ctx ends.
	Spawn func(name string, f func() error)
}

// Notifications are the downstream side of change notifications:
// viaduct's own hub (unless an external hub is configured), mounted at
// /hub, and the notifier that publishes each collection's changes on its
// topic.
type Notifications struct {
	hub    *websub.Hub // nil with an external hub or notifications off
	outbox *HubOutbox
}

// Start starts the hub and the notifier when republish.notify is
// enabled. The notifier runs until ctx ends; the hub until Close.
func Start(ctx context.Context, d Deps) (*Notifications, error) {
	repub := d.Republish
	cfg := repub.NotifyConfig()
	r := &Notifications{}
	if !cfg.Enabled {
		return r, nil
	}
	log := d.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("role", "notify")
	var subscribers func() int
	var queued func(context.Context) (uint64, error)
	// The metrics are gathered from the moment they are registered, which
	// is before the hub they count is built (its client reports to them),
	// and whether or not it ever starts: until then it has no subscribers.
	var started atomic.Pointer[websub.Hub]
	if cfg.ExternalHub == "" {
		subscribers = func() int {
			if h := started.Load(); h != nil {
				return len(h.Subscriptions())
			}
			return 0
		}
		queued = func(ctx context.Context) (uint64, error) { return streamDepth(ctx, d.Queue, queue.StreamHubOut) }
	}
	nm, err := NewNotifyMetrics(d.Registry, subscribers, queued)
	if err != nil {
		return nil, fmt.Errorf("registering notification metrics: %w", err)
	}
	var pub websub.Publisher
	var ready <-chan struct{}
	leading := new(atomic.Bool)
	if cfg.ExternalHub != "" {
		pub = &websub.ExternalHub{URL: cfg.ExternalHub, Client: nm.Client(hubClient(cfg.AllowLoopbackCallbacks))}
	} else {
		outbox, err := OpenHubOutbox(ctx, d.Queue, queue.HubOutConfig{MaxPerSubscriber: cfg.MaxQueued, MaxBytes: cfg.QueueMaxBytes}, log)
		if err != nil {
			return nil, err
		}
		r.outbox = outbox
		policy := websub.DefaultCallbackPolicy
		if cfg.AllowLoopbackCallbacks {
			policy = websub.AllowAllCallbacks
		}
		hcfg := cfg.Hub
		hcfg.URL = repub.HubURL()
		store, err := sharedHubStore(ctx, d, log)
		if err != nil {
			return nil, err
		}
		r.hub, err = websub.NewHub(ctx, hcfg, websub.HubOptions{
			Store:  store,
			Outbox: gatedOutbox{Outbox: outbox, leading: leading},
			Client: nm.Client(hubClient(cfg.AllowLoopbackCallbacks)),
			Policy: policy,
			Logger: log,

			TracerProvider: d.TracerProvider,
		})
		if err != nil {
			return nil, fmt.Errorf("starting hub: %w", err)
		}
		started.Store(r.hub)
		for _, topic := range repub.Topics() {
			r.hub.AddTopic(topic)
		}
		fl := newFollower(r.hub, store, log, nm.unreadable)
		ready = fl.ready
		d.Spawn("hub-follow", func() error { return fl.run(ctx) })
		pub = r.hub
	}
	pub = newLinkingPublisher(pub, d.Links, repub.TopicCollection)
	kv, err := d.Queue.Bucket(ctx, queue.BucketHub)
	if err != nil {
		r.Close()
		return nil, err
	}
	nf, err := NewNotifier(repub, &SharedState{kv: kv, cat: d.Catalog}, nm.Publisher(repub, pub), log)
	if err != nil {
		r.Close()
		return nil, err
	}
	if r.hub != nil {
		nf.Subscribed = r.hub.Subscribed
	}
	run := func(ctx context.Context) error { return nf.RunWoken(ctx, d.Applied) }
	d.Spawn("notifier", func() error { return leadNotify(ctx, d, r.hub, ready, leading, run, log) })
	return r, nil
}

// Mount serves the hub's subscription requests.
func (r *Notifications) Mount(mux *http.ServeMux) {
	if r != nil && r.hub != nil {
		mux.Handle(republish.HubPath, r.hub)
	}
}

// Close stops the hub's verifications and deliveries; what is queued
// stays in HUBOUT for the next start.
func (r *Notifications) Close() error {
	if r == nil || r.hub == nil {
		return nil
	}
	return r.hub.Close()
}

// Hub is viaduct's own hub; nil with an external hub or notifications
// off.
func (r *Notifications) Hub() *websub.Hub {
	if r == nil {
		return nil
	}
	return r.hub
}
