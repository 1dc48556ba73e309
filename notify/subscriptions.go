package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/websub"
)

// hubSubPrefix starts the key of each subscription in BucketHub.
const hubSubPrefix = "sub."

// HubSubscriptions keeps the hub's downstream subscriptions in BucketHub,
// one key per subscription, so that every node knows every subscription
// whichever node took it. It is a websub.Store.
type HubSubscriptions struct {
	kv jetstream.KeyValue
}

var _ websub.Store = (*HubSubscriptions)(nil)

// OpenHubSubscriptions opens the shared store of the hub's subscriptions
// in q's BucketHub.
func OpenHubSubscriptions(ctx context.Context, q *queue.Queue) (*HubSubscriptions, error) {
	kv, err := q.Bucket(ctx, queue.BucketHub)
	if err != nil {
		return nil, err
	}
	return &HubSubscriptions{kv: kv}, nil
}

// Put stores s, replacing the subscription with the same ID.
func (h *HubSubscriptions) Put(ctx context.Context, s websub.Subscription) error {
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("notify: encoding the subscription of %s to %s: %w", s.Callback, s.Topic, err)
	}
	if _, err := h.kv.Put(ctx, hubSubPrefix+s.ID(), b); err != nil {
		return fmt.Errorf("notify: storing the subscription of %s to %s: %w", s.Callback, s.Topic, err)
	}
	return nil
}

// Delete forgets subscription id; an unknown id is not an error.
func (h *HubSubscriptions) Delete(ctx context.Context, id string) error {
	if err := h.kv.Delete(ctx, hubSubPrefix+id); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("notify: deleting subscription %s: %w", id, err)
	}
	return nil
}

// List returns every stored subscription, ordered by topic and callback.
func (h *HubSubscriptions) List(ctx context.Context) ([]websub.Subscription, error) {
	keys, err := h.kv.ListKeysFiltered(ctx, hubSubPrefix+"*")
	if err != nil {
		return nil, fmt.Errorf("notify: listing hub subscriptions: %w", err)
	}
	var out []websub.Subscription
	for key := range keys.Keys() {
		e, err := h.kv.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("notify: reading hub subscription %s: %w", key, err)
		}
		var s websub.Subscription
		if err := json.Unmarshal(e.Value(), &s); err != nil {
			return nil, fmt.Errorf("notify: decoding hub subscription %s: %w", key, err)
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b websub.Subscription) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return strings.Compare(a.Callback, b.Callback)
	})
	return out, nil
}

// Watch calls changed, from its own goroutine, each time a subscription
// is stored or deleted by any node, until ctx ends.
func (h *HubSubscriptions) Watch(ctx context.Context, changed func()) error {
	w, err := h.kv.Watch(ctx, hubSubPrefix+"*", jetstream.UpdatesOnly())
	if err != nil {
		return fmt.Errorf("notify: watching hub subscriptions: %w", err)
	}
	go func() {
		defer w.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-w.Updates():
				if !ok {
					return
				}
				if e != nil {
					changed()
				}
			}
		}
	}()
	return nil
}
