package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/websub"
)

// KV is the catalog's small key/value state: Value returns an error
// wrapping catalog.ErrNotFound for a key never set. *catalog.Catalog
// satisfies it.
type KV interface {
	Value(ctx context.Context, key string) ([]byte, error)
	SetValue(ctx context.Context, key string, value []byte) error
}

var _ KV = (*catalog.Catalog)(nil)

// subscriptionsKey holds the hub's subscriptions, all in one value:
// there are at most the hub's max_subscriptions (10,000) and they change
// at subscription, renewal and expiry only, so rewriting them whole is
// cheap and needs no schema of its own.
const subscriptionsKey = "republish/hub/subscriptions"

// SubscriptionStore keeps viaduct's hub's subscriptions in the catalog,
// so that a restarted node delivers to the same callbacks without anyone
// subscribing again.
type SubscriptionStore struct {
	kv KV
	mu sync.Mutex
}

var _ websub.Store = (*SubscriptionStore)(nil)

// NewSubscriptionStore returns the Store on kv.
func NewSubscriptionStore(kv KV) *SubscriptionStore { return &SubscriptionStore{kv: kv} }

func (s *SubscriptionStore) load(ctx context.Context) (map[string]websub.Subscription, error) {
	b, err := s.kv.Value(ctx, subscriptionsKey)
	if errors.Is(err, catalog.ErrNotFound) {
		return map[string]websub.Subscription{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading hub subscriptions: %w", err)
	}
	var list []websub.Subscription
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("decoding hub subscriptions (key %s): %w", subscriptionsKey, err)
	}
	m := make(map[string]websub.Subscription, len(list))
	for _, sub := range list {
		m[sub.ID()] = sub
	}
	return m, nil
}

func (s *SubscriptionStore) save(ctx context.Context, m map[string]websub.Subscription) error {
	list := sorted(m)
	b, err := json.Marshal(list)
	if err != nil {
		return fmt.Errorf("encoding hub subscriptions: %w", err)
	}
	if err := s.kv.SetValue(ctx, subscriptionsKey, b); err != nil {
		return fmt.Errorf("storing hub subscriptions: %w", err)
	}
	return nil
}

func sorted(m map[string]websub.Subscription) []websub.Subscription {
	list := make([]websub.Subscription, 0, len(m))
	for _, sub := range m {
		list = append(list, sub)
	}
	slices.SortFunc(list, func(a, b websub.Subscription) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return strings.Compare(a.Callback, b.Callback)
	})
	return list
}

// Put stores sub, replacing the subscription with the same ID. No other
// hub shares this store: its writes are not numbered (revision 0).
func (s *SubscriptionStore) Put(ctx context.Context, sub websub.Subscription) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.load(ctx)
	if err != nil {
		return 0, err
	}
	m[sub.ID()] = sub
	return 0, s.save(ctx, m)
}

// Delete forgets subscription id; an unknown id is not an error.
func (s *SubscriptionStore) Delete(ctx context.Context, id string) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.load(ctx)
	if err != nil {
		return 0, err
	}
	if _, ok := m[id]; !ok {
		return 0, nil
	}
	delete(m, id)
	return 0, s.save(ctx, m)
}

// List returns every stored subscription, by topic and callback.
func (s *SubscriptionStore) List(ctx context.Context) ([]websub.Subscription, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.load(ctx)
	if err != nil {
		return nil, err
	}
	return sorted(m), nil
}
