package websub

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"
)

func publishN(t *testing.T, e *hubEnv, n int) []string {
	t.Helper()
	var bodies []string
	for i := range n {
		p := payload(t, t0.Add(time.Duration(i)*time.Minute), t0.Add(time.Duration(i+1)*time.Minute), fmt.Sprintf("http://example.com/%d", i))
		if err := e.hub.Publish(context.Background(), e.topic, p); err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, string(p))
	}
	return bodies
}

// TestRetriesInOrder: a subscriber failing with 500, 503 and a timeout-like
// 429 gets the first notification again after 10 s, 20 s and 40 s (the
// cap), and nothing queued after it overtakes it.
func TestRetriesInOrder(t *testing.T) {
	he := newHubEnv(t, newFakeClock(), NewMemStore(), NewMemOutbox())
	cb := newFakeCallback(t)
	statuses := []int{500, 503, 429, 502}
	cb.post = func(n int) int {
		if n <= len(statuses) {
			return statuses[n-1]
		}
		return 200
	}
	sub := cb.subscribe(t, he, "s3cret", "3600")
	want := publishN(t, he, 3)
	for i, wait := range []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 40 * time.Second} {
		eventually(t, fmt.Sprintf("attempt %d", i+1), func() bool { return cb.postCount() == i+1 })
		he.clock.waitTimer(t, wait)
		he.clock.Advance(wait)
	}
	eventually(t, "all deliveries", func() bool { return cb.postCount() == len(statuses)+3 })
	posts := cb.capturedPosts()
	for i, p := range posts {
		w := want[0]
		if i >= len(statuses) {
			w = want[i-len(statuses)]
		}
		if p.body != w {
			t.Fatalf("post %d carried the wrong notification (out of order)", i+1)
		}
		if err := VerifySignature("s3cret", []byte(p.body), p.header.Get(SignatureHeader)); err != nil {
			t.Fatalf("post %d: %v", i+1, err)
		}
		if self, hub := selfAndHub(p.header.Values("Link")); self != he.topic || hub != he.hub.URL() {
			t.Fatalf("post %d: Link self %q hub %q", i+1, self, hub)
		}
		if ct := p.header.Get("Content-Type"); ct != "application/xml" {
			t.Fatalf("post %d: Content-Type %q", i+1, ct)
		}
	}
	eventually(t, "the queue to empty", func() bool { return he.outbox.Len(sub.ID()) == 0 })
}

// TestRefusedNotificationIsDropped: a 4xx other than 408, 410 and 429
// says the payload will never be taken; the next one is delivered.
func TestRefusedNotificationIsDropped(t *testing.T) {
	he := newHubEnv(t, newFakeClock(), NewMemStore(), NewMemOutbox())
	cb := newFakeCallback(t)
	cb.post = func(n int) int {
		if n == 1 {
			return http.StatusBadRequest
		}
		return 200
	}
	cb.subscribe(t, he, "", "3600")
	want := publishN(t, he, 2)
	eventually(t, "both posts", func() bool { return cb.postCount() == 2 })
	if p := cb.capturedPosts(); p[1].body != want[1] || p[1].header.Get(SignatureHeader) != "" {
		t.Fatalf("second post: %+v", p[1])
	}
}

// TestLeaseExpiryDropsDeliveries: what a failing subscriber has not taken
// when its lease ends is dropped with the subscription.
func TestLeaseExpiryDropsDeliveries(t *testing.T) {
	he := newHubEnv(t, newFakeClock(), NewMemStore(), NewMemOutbox())
	cb := newFakeCallback(t)
	cb.post = func(int) int { return 500 }
	sub := cb.subscribe(t, he, "x", "300")
	publishN(t, he, 2)
	eventually(t, "the first attempt", func() bool { return cb.postCount() == 1 })
	he.clock.waitTimer(t, 10*time.Second)
	he.clock.Advance(300 * time.Second)
	eventually(t, "the subscription to end", func() bool { return len(he.hub.Subscriptions()) == 0 })
	if n := he.outbox.Len(sub.ID()); n != 0 {
		t.Fatalf("%d deliveries still queued", n)
	}
	if l, _ := he.store.List(context.Background()); len(l) != 0 {
		t.Fatalf("store still holds %+v", l)
	}
	n := cb.postCount()
	publishN(t, he, 1)
	he.clock.Advance(time.Hour)
	if cb.postCount() != n || he.outbox.Len(sub.ID()) != 0 {
		t.Fatal("delivered or queued after the lease ended")
	}
}

// TestIdleLeaseExpires: a subscription with nothing to deliver ends on
// time too.
func TestIdleLeaseExpires(t *testing.T) {
	he := newHubEnv(t, newFakeClock(), NewMemStore(), NewMemOutbox())
	cb := newFakeCallback(t)
	cb.subscribe(t, he, "", "300")
	he.clock.waitTimer(t, 300*time.Second)
	he.clock.Advance(299 * time.Second)
	if len(he.hub.Subscriptions()) != 1 {
		t.Fatal("ended before its lease")
	}
	he.clock.Advance(time.Second)
	eventually(t, "the subscription to end", func() bool { return len(he.hub.Subscriptions()) == 0 })
}

func TestGoneUnsubscribes(t *testing.T) {
	he := newHubEnv(t, newFakeClock(), NewMemStore(), NewMemOutbox())
	cb := newFakeCallback(t)
	cb.post = func(int) int { return http.StatusGone }
	sub := cb.subscribe(t, he, "x", "3600")
	publishN(t, he, 3)
	eventually(t, "the subscription to end", func() bool { return len(he.hub.Subscriptions()) == 0 })
	if l, _ := he.store.List(context.Background()); len(l) != 0 || he.outbox.Len(sub.ID()) != 0 {
		t.Fatalf("store %+v, queue %d", l, he.outbox.Len(sub.ID()))
	}
	if n := cb.postCount(); n != 1 {
		t.Fatalf("%d posts after 410, want 1", n)
	}
}

// TestDeliveriesSurviveRestart: a Hub closed with deliveries queued leaves
// them in the Outbox, and the next Hub on the same Store delivers them.
func TestDeliveriesSurviveRestart(t *testing.T) {
	clock, store, outbox := newFakeClock(), NewMemStore(), NewMemOutbox()
	he := newHubEnv(t, clock, store, outbox)
	cb := newFakeCallback(t)
	up := false
	cb.post = func(int) int {
		if up {
			return 200
		}
		return 503
	}
	sub := cb.subscribe(t, he, "x", "3600")
	want := publishN(t, he, 2)
	eventually(t, "the first attempt", func() bool { return cb.postCount() == 1 })
	he.hub.Close()
	if outbox.Len(sub.ID()) != 2 {
		t.Fatalf("%d queued after close, want 2", outbox.Len(sub.ID()))
	}
	cb.mu.Lock()
	up = true
	cb.mu.Unlock()
	he2 := newHubEnv(t, clock, store, outbox)
	if l := he2.hub.Subscriptions(); len(l) != 1 || l[0] != sub {
		t.Fatalf("restarted hub holds %+v", l)
	}
	eventually(t, "the deliveries", func() bool { return cb.postCount() == 3 })
	if p := cb.capturedPosts(); p[1].body != want[0] || p[2].body != want[1] {
		t.Fatal("delivered out of order after restart")
	}
}

// TestCloseLetsADeliveryInFlightEnd: a Hub closed while a subscriber is
// taking a payload waits for its answer and acknowledges it, so that the
// next Hub on the same queues does not deliver it a second time.
func TestCloseLetsADeliveryInFlightEnd(t *testing.T) {
	clock, store, outbox := newFakeClock(), NewMemStore(), NewMemOutbox()
	he := newHubEnv(t, clock, store, outbox)
	cb := newFakeCallback(t)
	closed := make(chan struct{})
	cb.post = func(n int) int {
		if n == 1 {
			go func() {
				he.hub.Close()
				close(closed)
			}()
			<-he.hub.ctx.Done()
		}
		return 204
	}
	sub := cb.subscribe(t, he, "x", "3600")
	first := publishN(t, he, 1)
	eventually(t, "the hub to close", func() bool {
		select {
		case <-closed:
			return true
		default:
			return false
		}
	})
	if n := outbox.Len(sub.ID()); n != 0 {
		t.Fatalf("%d deliveries queued after the subscriber took the one in flight, want 0", n)
	}
	he2 := newHubEnv(t, clock, store, outbox)
	he2.hub.AddTopic(he.topic)
	second := payload(t, t0.Add(time.Hour), t0.Add(2*time.Hour), "http://example.com/later")
	if err := he2.hub.Publish(context.Background(), he.topic, second); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the next delivery", func() bool { return cb.postCount() == 2 })
	if p := cb.capturedPosts(); p[0].body != first[0] || p[1].body != string(second) {
		t.Fatalf("deliveries %q, %q; want the first payload once, then the second", p[0].body, p[1].body)
	}
}
