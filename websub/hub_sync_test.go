package websub

import (
	"context"
	"testing"
	"time"
)

// gatedStore is a MemStore whose List takes its answer and then waits for
// the test, as a shared store's read can take its time.
type gatedStore struct {
	*MemStore
	read chan struct{} // told once List has its answer
	gate chan struct{} // closed to let List return
}

func (g *gatedStore) List(ctx context.Context) ([]Subscription, error) {
	subs, err := g.MemStore.List(ctx)
	select {
	case g.read <- struct{}{}:
	default:
	}
	<-g.gate
	return subs, err
}

// TestSyncKeepsASubscriptionActivatedMeanwhile: a Sync whose read of the
// Store was made before this hub activated a subscription does not stop
// that subscription: it reads again.
func TestSyncKeepsASubscriptionActivatedMeanwhile(t *testing.T) {
	ctx := context.Background()
	store := &gatedStore{MemStore: NewMemStore(), read: make(chan struct{}, 1), gate: make(chan struct{})}
	close(store.gate) // NewHub's own read goes through
	h, err := NewHub(ctx, HubConfig{URL: "http://hub.example.org/hub"}, HubOptions{Store: store, Outbox: NewMemOutbox()})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	<-store.read
	store.gate = make(chan struct{})

	done := make(chan error, 1)
	go func() { done <- h.Sync(ctx) }()
	<-store.read // Sync has read the Store: no subscription yet

	topic := "http://hub.example.org/s/notifications"
	s := Subscription{Topic: topic, Callback: "http://sub.example.org/cb", Lease: 3600, Expires: time.Now().Add(time.Hour)}
	if err := h.activate(ctx, s); err != nil {
		t.Fatal(err)
	}
	close(store.gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !h.Subscribed(topic) {
		t.Fatal("a Sync that read the Store before the subscription was activated stopped it")
	}
}
