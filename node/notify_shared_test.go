package node

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/websub"
)

// flakyStore is a websub.Store whose List fails while fail is above zero,
// as a shared store's reads do while its cluster elects a leader.
type flakyStore struct {
	*websub.MemStore
	fail atomic.Int32
}

func (f *flakyStore) List(ctx context.Context) ([]websub.Subscription, error) {
	if f.fail.Add(-1) >= 0 {
		return nil, errors.New("nats: timeout")
	}
	return f.MemStore.List(ctx)
}

// TestFollowHubRetriesAFailedRead: a subscription another node stored is
// taken up by this node's hub even when the reads after the store's
// change notice fail, with no further change to wake it.
func TestFollowHubRetriesAFailedRead(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	store := &flakyStore{MemStore: websub.NewMemStore()}
	hub, err := websub.NewHub(ctx, websub.HubConfig{URL: "http://127.0.0.1/hub"}, websub.HubOptions{Store: store, Outbox: websub.NewMemOutbox()})
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Close()
	changed := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		followHub(ctx, hub, changed, slog.New(slog.DiscardHandler))
	}()

	topic := "http://127.0.0.1/s/notifications"
	// Another node's hub stores a subscription; the change notice comes
	// once, and the first three reads after it fail.
	s := websub.Subscription{Topic: topic, Callback: "http://127.0.0.1:1/cb", Lease: 3600, Expires: time.Now().Add(time.Hour)}
	if err := store.Put(ctx, s); err != nil {
		t.Fatal(err)
	}
	store.fail.Store(3)
	changed <- struct{}{}
	waitFor(t, 10*time.Second, "the hub to take up the subscription", func() bool { return hub.Subscribed(topic) })
	if left := store.fail.Load(); left > 0 {
		t.Fatalf("the hub knows the subscription with %d failing reads still to come", left)
	}
	cancel()
	<-done
}

// staleStore is a websub.Store whose first List answers as a replica
// that has not yet applied the last write: without it.
type staleStore struct {
	*websub.MemStore
	stale atomic.Int32
}

func (s *staleStore) List(ctx context.Context) ([]websub.Subscription, error) {
	if s.stale.Add(-1) >= 0 {
		return nil, nil
	}
	return s.MemStore.List(ctx)
}

// TestFollowHubCorrectsAStaleRead: a read after the change notice that
// does not show the change yet is corrected by the periodic read.
func TestFollowHubCorrectsAStaleRead(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	store := &staleStore{MemStore: websub.NewMemStore()}
	hub, err := websub.NewHub(ctx, websub.HubConfig{URL: "http://127.0.0.1/hub"}, websub.HubOptions{Store: store, Outbox: websub.NewMemOutbox()})
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Close()
	changed := make(chan struct{}, 1)
	go followHub(ctx, hub, changed, slog.New(slog.DiscardHandler))

	topic := "http://127.0.0.1/s/notifications"
	s := websub.Subscription{Topic: topic, Callback: "http://127.0.0.1:1/cb", Lease: 3600, Expires: time.Now().Add(time.Hour)}
	if err := store.Put(ctx, s); err != nil {
		t.Fatal(err)
	}
	store.stale.Store(1)
	changed <- struct{}{}
	waitFor(t, 3*hubResync, "the hub to take up the subscription", func() bool { return hub.Subscribed(topic) })
}
