package notify

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
	"github.com/viaduct-mirror/viaduct/websub"
)

// clusterStores opens n nodes' shared subscription stores on a
// three-server JetStream cluster, the bucket at three replicas.
func clusterStores(t *testing.T, n int) []*HubSubscriptions {
	t.Helper()
	ctx := context.Background()
	c := queuetest.StartCluster(t, 3)
	var out []*HubSubscriptions
	for i := range n {
		cfg := queuetest.Config(t)
		cfg.URL, cfg.Dir, cfg.Replicas, cfg.NodeName = c.URL(), "", 3, string(rune('a'+i))
		q, err := queue.Open(ctx, cfg, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { q.Close() })
		s, err := OpenHubSubscriptions(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// followedHub is a hub on store kept in line by a follower of feed until
// the test ends.
func followedHub(t *testing.T, store websub.Store, feed subscriptionFeed) (*websub.Hub, *follower) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	hub, err := websub.NewHub(ctx, websub.HubConfig{URL: "http://127.0.0.1/hub"}, websub.HubOptions{Store: store, Outbox: websub.NewMemOutbox()})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	f := newFollower(hub, feed, slog.New(slog.DiscardHandler), prometheus.NewCounter(prometheus.CounterOpts{Name: "unreadable"}))
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		hub.Close()
	})
	return hub, f
}

// storedElsewhere stores a subscription to topic in store as another
// node's hub would, and returns it with the revision of the write.
func storedElsewhere(t *testing.T, store websub.Store, topic string) (websub.Subscription, uint64) {
	t.Helper()
	s := websub.Subscription{Topic: topic, Callback: "http://127.0.0.1:1/cb", Lease: 3600, Expires: time.Now().Add(time.Hour)}
	rev, err := store.Put(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	return s, rev
}

// receive waits, for a generous while, for what ch is told next.
func receive[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatal("nothing came in 30s")
		panic("unreachable")
	}
}

const (
	topicA = "http://127.0.0.1/a/notifications"
	topicB = "http://127.0.0.1/b/notifications"
)

// TestFollowHubTakesUpPutsAndDeletes: a subscription another node stores
// is taken up by this node's hub, and one it deletes ends here.
func TestFollowHubTakesUpPutsAndDeletes(t *testing.T) {
	stores := clusterStores(t, 2)
	elsewhere, here := stores[0], stores[1]
	hub, f := followedHub(t, here, here)
	s, _ := storedElsewhere(t, elsewhere, topicA)
	testutil.Eventually(t, 30*time.Second, "the hub to take up the subscription", func() bool { return hub.Subscribed(topicA) })
	select {
	case <-f.ready:
	default:
		t.Fatal("the hub took up a subscription before its watch told it had read the bucket")
	}
	if _, err := elsewhere.Delete(context.Background(), s.ID()); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 30*time.Second, "the hub to end the deleted subscription", func() bool { return !hub.Subscribed(topicA) })
}

// gatedFeed is a feed whose watches the test can end, and whose next
// watch starts only when the test opens the gate.
type gatedFeed struct {
	subscriptionFeed
	mu      sync.Mutex
	current jetstream.KeyWatcher
	gate    chan struct{} // a Watch waits for it to close
	froms   chan uint64   // told the revision each Watch starts from
}

func (g *gatedFeed) Watch(ctx context.Context, from uint64) (jetstream.KeyWatcher, error) {
	select {
	case g.froms <- from:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	g.mu.Lock()
	gate := g.gate
	g.mu.Unlock()
	select {
	case <-gate:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	w, err := g.subscriptionFeed.Watch(ctx, from)
	g.mu.Lock()
	g.current = w
	g.mu.Unlock()
	return w, err
}

// end stops the current watch and holds the next one at the gate, which
// it returns.
func (g *gatedFeed) end() chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gate = make(chan struct{})
	g.current.Stop()
	return g.gate
}

// TestFollowHubResumesAfterTheWatchEnds: a watch that ends is started
// again from the revision after the last one applied, and the changes
// made meanwhile (a put and a delete) reach the hub.
func TestFollowHubResumesAfterTheWatchEnds(t *testing.T) {
	stores := clusterStores(t, 2)
	elsewhere, here := stores[0], stores[1]
	open := make(chan struct{})
	close(open)
	feed := &gatedFeed{subscriptionFeed: here, gate: open, froms: make(chan uint64, 4)}
	hub, _ := followedHub(t, here, feed)
	if from := receive(t, feed.froms); from != 0 {
		t.Fatalf("the first watch started at revision %d, not at the bucket's values", from)
	}
	a, rev := storedElsewhere(t, elsewhere, topicA)
	testutil.Eventually(t, 30*time.Second, "the hub to take up the first subscription", func() bool { return hub.Subscribed(topicA) })

	gate := feed.end()
	if from := receive(t, feed.froms); from != rev+1 {
		t.Fatalf("the watch started again at revision %d, want %d (after the last applied)", from, rev+1)
	}
	storedElsewhere(t, elsewhere, topicB)
	if _, err := elsewhere.Delete(context.Background(), a.ID()); err != nil {
		t.Fatal(err)
	}
	close(gate)
	testutil.Eventually(t, 30*time.Second, "the hub to take up what changed while it was not watching", func() bool {
		return hub.Subscribed(topicB) && !hub.Subscribed(topicA)
	})
}

// laggingFeed answers watches as a replica of the bucket that has
// applied the writes up to revision at only: a later entry is handed on
// once the replica has caught up with it (catchUp). A watch's consumer
// may be placed on such a replica; a listing of the bucket may be too.
type laggingFeed struct {
	subscriptionFeed
	mu      sync.Mutex
	at      uint64
	moved   chan struct{} // closed and replaced when at changes
	marker  chan uint64   // told, each time a watch hands on its caught-up marker, what it stands at
	current *heldWatcher
}

// restart ends the current watch, as a lost connection would.
func (l *laggingFeed) restart() {
	l.mu.Lock()
	w := l.current
	l.mu.Unlock()
	w.Stop()
}

func newLaggingFeed(inner subscriptionFeed) *laggingFeed {
	return &laggingFeed{subscriptionFeed: inner, at: ^uint64(0), moved: make(chan struct{}), marker: make(chan uint64, 16)}
}

// catchUp has the replica apply the writes up to revision at.
func (l *laggingFeed) catchUp(at uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.at = at
	close(l.moved)
	l.moved = make(chan struct{})
}

func (l *laggingFeed) state() (uint64, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.at, l.moved
}

func (l *laggingFeed) Watch(ctx context.Context, from uint64) (jetstream.KeyWatcher, error) {
	w, err := l.subscriptionFeed.Watch(ctx, from)
	if err != nil {
		return nil, err
	}
	hw := &heldWatcher{inner: w, out: make(chan jetstream.KeyValueEntry), stop: make(chan struct{})}
	l.mu.Lock()
	l.current = hw
	l.mu.Unlock()
	go hw.run(l)
	return hw, nil
}

// heldWatcher hands on a real watch's entries as the lagging replica
// would: those it has applied, then its caught-up marker, then the others
// as it catches up, each in revision order.
type heldWatcher struct {
	inner jetstream.KeyWatcher
	out   chan jetstream.KeyValueEntry
	stop  chan struct{}
	once  sync.Once
}

func (h *heldWatcher) Updates() <-chan jetstream.KeyValueEntry { return h.out }

func (h *heldWatcher) Stop() error {
	h.once.Do(func() { close(h.stop) })
	return h.inner.Stop()
}

func (h *heldWatcher) run(l *laggingFeed) {
	defer close(h.out)
	var queue []jetstream.KeyValueEntry // nil: the caught-up marker
	in := h.inner.Updates()
	for {
		at, moved := l.state()
		var out chan<- jetstream.KeyValueEntry
		var next jetstream.KeyValueEntry
		if len(queue) > 0 && (queue[0] == nil || queue[0].Revision() <= at) {
			out, next = h.out, queue[0]
		}
		select {
		case e, ok := <-in:
			if !ok {
				return
			}
			if e != nil {
				queue = append(queue, e)
				continue
			}
			// The replica has sent what it holds: its marker goes before
			// the entries it has not applied yet.
			i := 0
			for i < len(queue) && queue[i].Revision() <= at {
				i++
			}
			queue = append(queue[:i], append([]jetstream.KeyValueEntry{nil}, queue[i:]...)...)
		case out <- next:
			queue = queue[1:]
			if next == nil {
				select {
				case l.marker <- at:
				case <-h.stop:
					return
				}
			}
		case <-moved:
		case <-h.stop:
			return
		}
	}
}

// TestFollowHubNeverDropsOnALaggingReplica: a hub that knows a
// subscription keeps it when its watch is started again on a replica
// that has not applied that subscription's write (nor anything after):
// a listing answered by that replica would not show it, and a hub that
// took such a listing for the bucket's state would stop delivering to the
// subscription (and its node, publishing, would skip its changes). The
// hub learns what the replica has not applied once it catches up.
func TestFollowHubNeverDropsOnALaggingReplica(t *testing.T) {
	stores := clusterStores(t, 2)
	elsewhere, here := stores[0], stores[1]
	lag := newLaggingFeed(here)
	hub, _ := followedHub(t, here, lag)
	receive(t, lag.marker)
	storedElsewhere(t, elsewhere, topicA)
	testutil.Eventually(t, 30*time.Second, "the hub to take up the subscription", func() bool { return hub.Subscribed(topicA) })

	// The next watch is answered by a replica that has applied nothing;
	// another node subscribes meanwhile.
	lag.catchUp(0)
	lag.restart()
	if at := receive(t, lag.marker); at != 0 {
		t.Fatalf("the watch started again on a replica at revision %d, want 0", at)
	}
	_, rev := storedElsewhere(t, elsewhere, topicB)
	if !hub.Subscribed(topicA) {
		t.Fatal("a watch answered by a lagging replica dropped a subscription from the hub")
	}
	if hub.Subscribed(topicB) {
		t.Fatal("the lagging replica handed on a write it has not applied")
	}
	lag.catchUp(rev)
	testutil.Eventually(t, 30*time.Second, "the hub to learn what the replica caught up with", func() bool { return hub.Subscribed(topicB) })
	if !hub.Subscribed(topicA) {
		t.Fatal("the hub lost a subscription nobody deleted")
	}
}

// TestFollowHubCountsWhatItCannotRead: an entry of the bucket that is not
// a subscription (written by something other than a hub) is passed over
// and counted; a subscription stored after it is still taken up.
func TestFollowHubCountsWhatItCannotRead(t *testing.T) {
	stores := clusterStores(t, 2)
	elsewhere, here := stores[0], stores[1]
	hub, f := followedHub(t, here, here)
	if _, err := elsewhere.kv.Put(context.Background(), hubSubPrefix+"not-json", []byte("{not a subscription")); err != nil {
		t.Fatal(err)
	}
	storedElsewhere(t, elsewhere, topicA)
	testutil.Eventually(t, 30*time.Second, "the hub to take up the subscription after the unreadable entry", func() bool { return hub.Subscribed(topicA) })
	var m dto.Metric
	if err := f.unreadable.Write(&m); err != nil {
		t.Fatal(err)
	}
	if n := m.GetCounter().GetValue(); n != 1 {
		t.Errorf("unreadable entries counted: %v, want 1", n)
	}
}
