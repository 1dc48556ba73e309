package notify

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/websub"
)

// unsettledStore is a websub.Store whose List fails while fail is above
// zero, as a shared store's reads do while its cluster elects a leader,
// and then, while stale is above zero, answers as a replica that has not
// yet applied the last write: without it.
type unsettledStore struct {
	*websub.MemStore
	fail, stale atomic.Int32
}

func (u *unsettledStore) List(ctx context.Context) ([]websub.Subscription, error) {
	if u.fail.Add(-1) >= 0 {
		return nil, errors.New("nats: timeout")
	}
	if u.stale.Add(-1) >= 0 {
		return nil, nil
	}
	return u.MemStore.List(ctx)
}

// followedHub is a hub on store kept in line by followHub until the test
// ends, and the channel that signals it a change to the store.
func followedHub(t *testing.T, store websub.Store) (*websub.Hub, chan<- struct{}) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	hub, err := websub.NewHub(ctx, websub.HubConfig{URL: "http://127.0.0.1/hub"}, websub.HubOptions{Store: store, Outbox: websub.NewMemOutbox()})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	changed := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		followHub(ctx, hub, changed, slog.New(slog.DiscardHandler))
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		hub.Close()
	})
	return hub, changed
}

// storedElsewhere stores a subscription in store as another node's hub
// would, and returns its topic.
func storedElsewhere(t *testing.T, store websub.Store) string {
	t.Helper()
	topic := "http://127.0.0.1/s/notifications"
	s := websub.Subscription{Topic: topic, Callback: "http://127.0.0.1:1/cb", Lease: 3600, Expires: time.Now().Add(time.Hour)}
	if err := store.Put(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	return topic
}

// TestFollowHubRetriesAFailedRead: a subscription another node stored is
// taken up by this node's hub even when the reads after the store's
// change notice fail, with no further change to wake it.
func TestFollowHubRetriesAFailedRead(t *testing.T) {
	store := &unsettledStore{MemStore: websub.NewMemStore()}
	hub, changed := followedHub(t, store)
	// The change notice comes once, and the first three reads after it
	// fail.
	topic := storedElsewhere(t, store)
	store.fail.Store(3)
	changed <- struct{}{}
	testutil.Eventually(t, 10*time.Second, "the hub to take up the subscription", func() bool { return hub.Subscribed(topic) })
	if left := store.fail.Load(); left > 0 {
		t.Fatalf("the hub knows the subscription with %d failing reads still to come", left)
	}
}

// TestFollowHubCorrectsAStaleRead: a read after the change notice that
// does not show the change yet is corrected by the periodic read.
func TestFollowHubCorrectsAStaleRead(t *testing.T) {
	store := &unsettledStore{MemStore: websub.NewMemStore()}
	hub, changed := followedHub(t, store)
	topic := storedElsewhere(t, store)
	store.stale.Store(1)
	changed <- struct{}{}
	testutil.Eventually(t, 3*hubResync, "the hub to take up the subscription", func() bool { return hub.Subscribed(topic) })
}
