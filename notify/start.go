package node

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sync/atomic"
	"syscall"
	"time"

	notifypkg "github.com/viaduct-mirror/viaduct/notify"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/republish"
	"github.com/viaduct-mirror/viaduct/upstream"
	"github.com/viaduct-mirror/viaduct/websub"
)

// notify is the downstream side of change notifications: viaduct's own
// hub (unless an external hub is configured), mounted at /hub, and the
// notifier that publishes each collection's changes on its topic.
type notify struct {
	hub    *websub.Hub // nil with an external hub or notifications off
	outbox *notifypkg.HubOutbox
}

// startNotify starts the hub and the notifier when republish.notify is
// enabled. The notifier runs until ctx ends; the hub until close.
func startNotify(ctx context.Context, n *Node, repub *republish.Server) (*notify, error) {
	cfg := repub.NotifyConfig()
	r := &notify{}
	if !cfg.Enabled {
		return r, nil
	}
	log := n.log.With("role", "notify")
	var subscribers func() int
	var queued func(context.Context) (uint64, error)
	if cfg.ExternalHub == "" {
		subscribers = func() int { return len(r.hub.Subscriptions()) }
		queued = func(ctx context.Context) (uint64, error) { return streamDepth(ctx, n.q, queue.StreamHubOut) }
	}
	nm, err := republish.NewNotifyMetrics(n.reg, subscribers, queued)
	if err != nil {
		return nil, fmt.Errorf("registering notification metrics: %w", err)
	}
	var pub websub.Publisher
	leading := new(atomic.Bool)
	if cfg.ExternalHub != "" {
		pub = &websub.ExternalHub{URL: cfg.ExternalHub, Client: nm.Client(hubClient(cfg.AllowLoopbackCallbacks))}
	} else {
		outbox, err := notifypkg.OpenHubOutbox(ctx, n.q, queue.HubOutConfig{MaxPerSubscriber: cfg.MaxQueued, MaxBytes: cfg.QueueMaxBytes}, log)
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
		store, err := sharedHubStore(ctx, n, log)
		if err != nil {
			return nil, err
		}
		r.hub, err = websub.NewHub(ctx, hcfg, websub.HubOptions{
			Store:  store,
			Outbox: gatedOutbox{Outbox: outbox, leading: leading},
			Client: nm.Client(hubClient(cfg.AllowLoopbackCallbacks)),
			Policy: policy,
			Logger: log,

			TracerProvider: n.opts.TracerProvider,
		})
		if err != nil {
			return nil, fmt.Errorf("starting hub: %w", err)
		}
		for _, topic := range repub.Topics() {
			r.hub.AddTopic(topic)
		}
		hub, changed := r.hub, make(chan struct{}, 1)
		if err := store.Watch(ctx, func() {
			select {
			case changed <- struct{}{}:
			default:
			}
		}); err != nil {
			r.close()
			return nil, err
		}
		n.spawn("hub-follow", func() error { return followHub(ctx, hub, changed, log) })
		pub = r.hub
	}
	pub = newLinkingPublisher(pub, n.links, repub.TopicCollection)
	kv, err := n.q.Bucket(ctx, queue.BucketHub)
	if err != nil {
		r.close()
		return nil, err
	}
	nf, err := republish.NewNotifier(repub, &sharedState{kv: kv, cat: n.cat}, nm.Publisher(repub, pub), log)
	if err != nil {
		r.close()
		return nil, err
	}
	if r.hub != nil {
		nf.Subscribed = r.hub.Subscribed
	}
	run := func(ctx context.Context) error { return nf.RunWoken(ctx, n.applied) }
	n.spawn("notifier", func() error { return leadNotify(ctx, n, r.hub, leading, run, log) })
	return r, nil
}

// mount serves the hub's subscription requests.
func (r *notify) mount(mux *http.ServeMux) {
	if r != nil && r.hub != nil {
		mux.Handle(republish.HubPath, r.hub)
	}
}

// close stops the hub's verifications and deliveries; what is queued
// stays in HUBOUT for the next start.
func (r *notify) close() error {
	if r == nil || r.hub == nil {
		return nil
	}
	return r.hub.Close()
}

// hubClient is the hub's client for callbacks and the external hub: no
// redirects, and no connections to loopback, private, link-local or
// unspecified addresses unless allowLocal, checked on the address really
// dialled (a policy sees only names).
func hubClient(allowLocal bool) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second}
	if !allowLocal {
		d.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("hub: dialling %s: %w", address, err)
			}
			if err := upstream.CheckAddress(ap.Addr(), false, false); err != nil {
				return fmt.Errorf("hub: dialling %s: %w: %w", address, errNotPublic, err)
			}
			return nil
		}
	}
	tr := &http.Transport{
		Proxy: nil, DialContext: d.DialContext, ForceAttemptHTTP2: true,
		MaxIdleConns: 100, IdleConnTimeout: 90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second, ResponseHeaderTimeout: 30 * time.Second,
	}
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

var errNotPublic = errors.New("address is not public")

// streamDepth is how many messages a stream holds now.
func streamDepth(ctx context.Context, q *queue.Queue, stream string) (uint64, error) {
	s, err := q.JetStream().Stream(ctx, stream)
	if err != nil {
		return 0, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0, err
	}
	return info.State.Msgs, nil
}
