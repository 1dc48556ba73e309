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
	q  *queue.Queue
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
	return &HubSubscriptions{q: q, kv: kv}, nil
}

// Put stores s, replacing the subscription with the same ID, and returns
// the revision of the write.
func (h *HubSubscriptions) Put(ctx context.Context, s websub.Subscription) (uint64, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return 0, fmt.Errorf("notify: encoding the subscription of %s to %s: %w", s.Callback, s.Topic, err)
	}
	rev, err := h.kv.Put(ctx, hubSubPrefix+s.ID(), b)
	if err != nil {
		return 0, fmt.Errorf("notify: storing the subscription of %s to %s: %w", s.Callback, s.Topic, err)
	}
	return rev, nil
}

// Delete forgets subscription id, and returns the revision of the
// deletion; an unknown id is not an error.
func (h *HubSubscriptions) Delete(ctx context.Context, id string) (uint64, error) {
	rev, err := h.q.DeleteKey(ctx, queue.BucketHub, hubSubPrefix+id)
	if err != nil {
		return 0, fmt.Errorf("notify: deleting subscription %s: %w", id, err)
	}
	return rev, nil
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

// Watch watches every subscription in the bucket: from revision from
// on, or, with from 0, the values the bucket holds now and every change
// after them. The watcher sends a nil entry once it has sent what the
// bucket held when it started, and deletions as entries whose Operation
// says so.
func (h *HubSubscriptions) Watch(ctx context.Context, from uint64) (jetstream.KeyWatcher, error) {
	var opts []jetstream.WatchOpt
	if from > 0 {
		opts = append(opts, jetstream.ResumeFromRevision(from))
	}
	w, err := h.kv.Watch(ctx, hubSubPrefix+"*", opts...)
	if err != nil {
		return nil, fmt.Errorf("notify: watching hub subscriptions: %w", err)
	}
	return w, nil
}
