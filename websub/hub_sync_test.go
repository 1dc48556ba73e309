package websub

import (
	"context"
	"testing"
	"time"
)

// followEnv is a Hub on a MemStore whose feed the test plays: it hands
// Follow the changes "other hubs" made, as late as it likes.
func followEnv(t *testing.T) (*Hub, *MemStore, Subscription) {
	t.Helper()
	store := NewMemStore()
	h, err := NewHub(context.Background(), HubConfig{URL: "http://hub.example.org/hub"}, HubOptions{Store: store, Outbox: NewMemOutbox()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	s := Subscription{Topic: "http://hub.example.org/s/notifications", Callback: "http://sub.example.org/cb",
		Secret: "first", Lease: 3600, Expires: time.Now().Add(time.Hour)}
	return h, store, s
}

func putChange(rev uint64, s Subscription) Change { return Change{Revision: rev, ID: s.ID(), Sub: &s} }
func delChange(rev uint64, s Subscription) Change { return Change{Revision: rev, ID: s.ID()} }

// TestFollowKeepsASubscriptionActivatedMeanwhile: changes another hub
// made before this hub activated a subscription, read from the feed only
// afterwards (a replica that lags), do not stop it.
func TestFollowKeepsASubscriptionActivatedMeanwhile(t *testing.T) {
	ctx := context.Background()
	h, store, s := followEnv(t)
	// Elsewhere: subscribed (1) and unsubscribed (2); here: subscribed again (3).
	if _, err := store.Put(ctx, s); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Delete(ctx, s.ID()); err != nil {
		t.Fatal(err)
	}
	if err := h.activate(ctx, s); err != nil {
		t.Fatal(err)
	}
	h.Follow(putChange(1, s))
	h.Follow(delChange(2, s))
	if !h.Subscribed(s.Topic) {
		t.Fatal("a deletion older than the hub's own activation stopped the subscription")
	}
	h.Follow(putChange(3, s)) // the activation itself, read back
	h.Follow(delChange(4, s)) // a later unsubscription elsewhere
	if h.Subscribed(s.Topic) {
		t.Fatal("a deletion newer than the activation did not stop the subscription")
	}
}

// TestFollowOnlyMovesForward: a change the hub has seen something newer
// than is ignored, whether it would stop, alter or restart a
// subscription; a newer one applies.
func TestFollowOnlyMovesForward(t *testing.T) {
	h, _, s := followEnv(t)
	renewed := s
	renewed.Secret = "second"
	h.Follow(putChange(5, renewed))
	if !h.Subscribed(s.Topic) {
		t.Fatal("a subscription read from the feed was not taken up")
	}
	h.Follow(delChange(3, s))
	h.Follow(putChange(4, s))
	if got := h.Subscriptions(); len(got) != 1 || got[0].Secret != "second" {
		t.Fatalf("stale changes altered the view: %+v", got)
	}
	h.Follow(delChange(6, s))
	if h.Subscribed(s.Topic) {
		t.Fatal("a deletion read from the feed did not stop the subscription")
	}
	h.Follow(putChange(5, renewed)) // a feed started again behind the deletion
	if h.Subscribed(s.Topic) {
		t.Fatal("a put older than the deletion brought the subscription back")
	}
	h.Follow(putChange(7, s))
	if got := h.Subscriptions(); len(got) != 1 || got[0].Secret != "first" {
		t.Fatalf("a newer subscription was not taken up: %+v", got)
	}
}

// TestFollowKeepsARemovalMeanwhile: a put older than this hub's own
// removal of a subscription, read afterwards, does not bring it back.
func TestFollowKeepsARemovalMeanwhile(t *testing.T) {
	ctx := context.Background()
	h, _, s := followEnv(t)
	if err := h.activate(ctx, s); err != nil { // revision 1
		t.Fatal(err)
	}
	if err := h.remove(ctx, s.ID(), "unsubscribed"); err != nil { // revision 2
		t.Fatal(err)
	}
	h.Follow(putChange(1, s))
	if h.Subscribed(s.Topic) {
		t.Fatal("a put older than the hub's own removal brought the subscription back")
	}
}
