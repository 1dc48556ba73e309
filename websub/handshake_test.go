package websub

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestHandshake runs the whole protocol between a Hub and a Subscriber in
// process: subscribe and verify, signed deliveries in order (one retried
// because the NotifyFunc failed), renewal before the lease ends, and
// unsubscription.
func TestHandshake(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock()
	he := newHubEnv(t, clock, NewMemStore(), NewMemOutbox())
	rec := &recorder{failFirst: 1}
	s, _ := newSubscriber(t, clock, rec, time.Hour)

	sub, err := s.Subscribe(ctx, he.hub.URL(), he.topic)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the subscription to be verified", func() bool {
		got, _ := s.Get(sub.ID)
		return got.State == Active
	})
	got, _ := s.Get(sub.ID)
	if got.Lease != time.Hour || !got.Expires.Equal(clock.Now().Add(time.Hour)) {
		t.Fatalf("granted lease %v until %v, want 1h from now", got.Lease, got.Expires)
	}
	eventually(t, "the hub to hold the subscription", func() bool { return len(he.hub.Subscriptions()) == 1 })
	hs := he.hub.Subscriptions()[0]
	if hs.Callback != sub.Callback || hs.Topic != he.topic || hs.Lease != 3600 || hs.Secret == "" {
		t.Fatalf("hub holds %+v", hs)
	}
	if stored, _ := he.store.List(ctx); len(stored) != 1 || stored[0] != hs {
		t.Fatalf("store holds %+v, want %+v", stored, hs)
	}

	if err := he.hub.Publish(ctx, he.topic, payload(t, t0, t0.Add(time.Minute), "http://example.com/a")); err != nil {
		t.Fatal(err)
	}
	if err := he.hub.Publish(ctx, he.topic, payload(t, t0.Add(time.Minute), t0.Add(2*time.Minute), "http://example.com/b", "http://example.com/c")); err != nil {
		t.Fatal(err)
	}
	// The first delivery is refused by the NotifyFunc: the hub backs off
	// and delivers both, in order.
	eventually(t, "the first attempt", func() bool { n, _ := rec.snapshot(); return n == 1 })
	clock.waitTimer(t, 10*time.Second)
	clock.Advance(10 * time.Second)
	eventually(t, "both notifications", func() bool { _, g := rec.snapshot(); return len(g) == 2 })
	_, notes := rec.snapshot()
	if !notes[0].from.Equal(t0) || !notes[1].from.Equal(t0.Add(time.Minute)) || !notes[1].until.Equal(t0.Add(2*time.Minute)) {
		t.Fatalf("intervals out of order: %+v", notes)
	}
	if !slices.Equal(notes[1].entries, []string{"http://example.com/b", "http://example.com/c"}) || notes[0].sub.ID != sub.ID {
		t.Fatalf("notifications %+v", notes)
	}
	eventually(t, "the queue to empty", func() bool { return he.outbox.Len(hs.ID()) == 0 })

	// Renewal at four fifths of the lease extends it at both ends.
	clock.Advance(48 * time.Minute)
	eventually(t, "the renewal", func() bool {
		got, _ := s.Get(sub.ID)
		return got.Expires.Equal(clock.Now().Add(time.Hour))
	})
	eventually(t, "the hub to extend the lease", func() bool {
		l := he.hub.Subscriptions()
		return len(l) == 1 && l[0].Expires.Equal(clock.Now().Add(time.Hour))
	})
	// Past the first lease's end the subscription still delivers.
	clock.Advance(30 * time.Minute)
	if err := he.hub.Publish(ctx, he.topic, payload(t, t0.Add(2*time.Minute), t0.Add(3*time.Minute), "http://example.com/d")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the third notification", func() bool { _, g := rec.snapshot(); return len(g) == 3 })

	if err := s.Unsubscribe(ctx, sub.ID); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the unsubscription", func() bool {
		_, ok := s.Get(sub.ID)
		return !ok && len(he.hub.Subscriptions()) == 0
	})
	if stored, _ := he.store.List(ctx); len(stored) != 0 {
		t.Fatalf("store still holds %+v", stored)
	}
	if err := he.hub.Publish(ctx, he.topic, payload(t, t0.Add(3*time.Minute), t0.Add(4*time.Minute), "http://example.com/e")); err != nil {
		t.Fatal(err)
	}
	if he.outbox.Len(hs.ID()) != 0 {
		t.Fatal("a publication was queued for an unsubscribed callback")
	}
}
