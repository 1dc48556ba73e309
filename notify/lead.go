package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/websub"
)

// leaseNotify is the lease of the node that publishes change
// notifications and delivers the hub's queues. Every node takes
// subscriptions (they are shared in queue.BucketHub); one node at a time
// turns the change log into notifications, from a cursor every node can
// resume, and delivers them, so that a subscriber gets each once whichever
// node it subscribed at.
const leaseNotify = "notify"

// gatedOutbox hands out deliveries only while this node delivers:
// elsewhere the hub's loops find their queues empty.
type gatedOutbox struct {
	websub.Outbox
	leading *atomic.Bool
}

func (g gatedOutbox) Head(ctx context.Context, sub string) (websub.Delivery, bool, error) {
	if !g.leading.Load() {
		return websub.Delivery{}, false, nil
	}
	return g.Outbox.Head(ctx, sub)
}

// SharedState is the notifier's state (its cursor per collection) in
// queue.BucketHub, so that the node that takes over publishing resumes
// where the last one stopped; a value not there yet is read from the
// catalog, where versions before kept it.
type SharedState struct {
	kv  jetstream.KeyValue
	cat *catalog.Catalog
}

var _ KV = (*SharedState)(nil)

// NewSharedState is the notifier's state in kv (queue.BucketHub), read
// from cat where kv holds no value yet.
func NewSharedState(kv jetstream.KeyValue, cat *catalog.Catalog) *SharedState {
	return &SharedState{kv: kv, cat: cat}
}

func stateKey(key string) string { return "state." + queue.KVKey(key) }

func (s *SharedState) Value(ctx context.Context, key string) ([]byte, error) {
	e, err := s.kv.Get(ctx, stateKey(key))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return s.cat.Value(ctx, key)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", key, err)
	}
	return e.Value(), nil
}

func (s *SharedState) SetValue(ctx context.Context, key string, value []byte) error {
	if _, err := s.kv.Put(ctx, stateKey(key), value); err != nil {
		return fmt.Errorf("storing %s: %w", key, err)
	}
	return nil
}

// sharedHubStore opens the shared subscription store, carrying over the
// subscriptions an earlier version kept in the catalog when the shared
// store holds none yet.
func sharedHubStore(ctx context.Context, d Deps, log *slog.Logger) (*HubSubscriptions, error) {
	subs, err := OpenHubSubscriptions(ctx, d.Queue)
	if err != nil {
		return nil, err
	}
	have, err := subs.List(ctx)
	if err != nil || len(have) > 0 {
		return subs, err
	}
	old, err := NewSubscriptionStore(d.Catalog).List(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the hub subscriptions kept in the catalog: %w", err)
	}
	for _, s := range old {
		if _, err := subs.Put(ctx, s); err != nil {
			return nil, err
		}
	}
	if len(old) > 0 {
		log.Info("hub subscriptions carried over from the catalog to the shared store", "subscriptions", len(old))
	}
	return subs, nil
}

// leadNotify runs the notifier (and lets the hub deliver) whenever this
// node holds the notify lease, until ctx ends. A node takes the lease only
// once its catalog has caught up with EVENTS, so that the notifications it
// builds are those the last holder would have built.
//
// Before it publishes anything the node waits until its hub has read
// every subscription the shared bucket held when the hub's watch started
// (ready; nil without a hub of its own), so that a subscription taken at
// another node before this one started is not passed over.
func leadNotify(ctx context.Context, d Deps, hub *websub.Hub, ready <-chan struct{}, leading *atomic.Bool, run func(context.Context) error, log *slog.Logger) error {
	every := d.Queue.LeaseTTL() / 3
	for ctx.Err() == nil {
		if ok, err := d.CaughtUp(ctx); err != nil || !ok {
			pause(ctx, 100*time.Millisecond)
			continue
		}
		lease, err := d.Queue.Lease(ctx, leaseNotify)
		if err != nil {
			if !errors.Is(err, queue.ErrLeaseHeld) && ctx.Err() == nil {
				log.Warn("taking the notify lease", "err", err)
			}
			pause(ctx, every)
			continue
		}
		log.Info("publishing change notifications from this node", "node", d.Queue.NodeName())
		lctx, cancel := lease.Context(ctx)
		leading.Store(true)
		if hub != nil {
			select {
			case <-ready:
			case <-lctx.Done():
			}
			hub.Wake()
		}
		if lctx.Err() == nil {
			err = run(lctx)
		}
		leading.Store(false)
		cancel()
		if rerr := lease.Release(context.WithoutCancel(ctx)); rerr != nil {
			log.Warn("releasing the notify lease", "err", rerr)
		}
		if err != nil && ctx.Err() == nil {
			log.Warn("notifier stopped", "err", err)
		}
	}
	return nil
}

// pause waits d or until ctx ends.
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
