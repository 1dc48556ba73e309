package websub

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sync"
	"time"
)

// Subscription is one verified subscription of a Hub: WebSub identifies it
// by its topic and callback.
type Subscription struct {
	Topic    string    `json:"topic"`
	Callback string    `json:"callback"`
	Secret   string    `json:"secret,omitempty"`
	Lease    int64     `json:"lease_seconds"`
	Expires  time.Time `json:"expires"`
}

// ID is a short stable name of the subscription's (topic, callback) pair,
// usable as a key or a NATS subject token: a resubscription keeps its ID,
// and so its queued deliveries.
func (s *Subscription) ID() string { return SubscriptionID(s.Topic, s.Callback) }

// SubscriptionID is the ID of the subscription of callback to topic.
func SubscriptionID(topic, callback string) string {
	h := sha256.Sum256([]byte(topic + "\x00" + callback))
	return hex.EncodeToString(h[:12])
}

// Store keeps a Hub's subscriptions across restarts. Put replaces the
// subscription with the same ID. Put and Delete return the revision of
// their write: a Store that several hubs share numbers its writes in the
// order its change feed gives them (see Hub.Follow), so that a hub can
// tell a change it reads there from one older than its own; a Store no
// other hub shares may number them as it likes.
type Store interface {
	Put(ctx context.Context, s Subscription) (revision uint64, err error)
	Delete(ctx context.Context, id string) (revision uint64, err error)
	List(ctx context.Context) ([]Subscription, error)
}

// MemStore is a Store in memory, for tests and for a hub that may forget
// its subscribers on restart.
type MemStore struct {
	mu   sync.Mutex
	subs map[string]Subscription
	rev  uint64
}

var _ Store = (*MemStore)(nil)

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore { return &MemStore{subs: map[string]Subscription{}} }

// Put stores s under its ID.
func (m *MemStore) Put(_ context.Context, s Subscription) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.subs[s.ID()] = s
	m.rev++
	return m.rev, nil
}

// Delete forgets the subscription id; an unknown id is not an error.
func (m *MemStore) Delete(_ context.Context, id string) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.subs, id)
	m.rev++
	return m.rev, nil
}

// List returns every stored subscription, ordered by topic and callback.
func (m *MemStore) List(_ context.Context) ([]Subscription, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Subscription, 0, len(m.subs))
	for _, s := range m.subs {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Subscription) int { return compareSubs(&a, &b) })
	return out, nil
}
