package node

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/websub"
)

// received is one notification a downstream subscriber took.
type received struct {
	from, until time.Time
	entries     []*resourcesync.Entry
}

// downstream is a Destination subscribed to a node's topics through
// websub.Subscriber, recording every notification it accepts.
type downstream struct {
	srv *httptest.Server
	sub *websub.Subscriber
	mu  sync.Mutex
	got []received
}

func startDownstream(t testing.TB) *downstream {
	t.Helper()
	d := &downstream{}
	d.srv, d.sub = startSubscriber(t, func(_ context.Context, _ websub.Sub, h *resourcesync.Header, entries []*resourcesync.Entry) error {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.got = append(d.got, received{from: h.MD.From, until: h.MD.Until, entries: entries})
		return nil
	})
	return d
}

// startSubscriber serves a websub.Subscriber calling notify on loopback
// until the test ends.
func startSubscriber(t testing.TB, notify websub.NotifyFunc) (*httptest.Server, *websub.Subscriber) {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	srv.Start()
	t.Cleanup(srv.Close)
	sub, err := websub.NewSubscriber(websub.SubscriberConfig{CallbackBase: srv.URL + "/cb/"}, websub.SubscriberOptions{}, notify)
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = sub
	t.Cleanup(func() { sub.Close() })
	return srv, sub
}

// subscribe subscribes to topic at hub and waits for the hub's verification.
func (d *downstream) subscribe(t testing.TB, hub, topic string) websub.Sub {
	t.Helper()
	return subscribeVerified(t, d.sub, hub, topic)
}

// subscribeTo subscribes to collection "s" at node n's hub and waits
// until the hub holds the subscription: the subscriber counts itself
// subscribed once it has answered the hub's verification, a moment before
// the hub stores it, and n owes it every change from then on.
func (d *downstream) subscribeTo(t testing.TB, n *Node) websub.Sub {
	t.Helper()
	s := d.subscribe(t, n.URL()+"/hub", n.URL()+"/s/notifications")
	waitHubHolds(t, n, s.Callback)
	return s
}

// waitHubHolds waits until n's hub holds a subscription of callback.
func waitHubHolds(t testing.TB, n *Node, callback string) {
	t.Helper()
	waitFor(t, 30*time.Second, "the hub of "+n.cfg.Queue.NodeName+" to hold the subscription", func() bool {
		return slices.ContainsFunc(n.note.Hub().Subscriptions(), func(h websub.Subscription) bool { return h.Callback == callback })
	})
}

// subscribeVerified subscribes sub to topic at hub and waits for the
// hub's verification.
func subscribeVerified(t testing.TB, sub *websub.Subscriber, hub, topic string) websub.Sub {
	t.Helper()
	s, err := sub.Subscribe(context.Background(), hub, topic)
	if err != nil {
		t.Fatalf("subscribing to %s: %v", topic, err)
	}
	waitFor(t, 10*time.Second, "the hub to verify the subscription", func() bool {
		cur, ok := sub.Get(s.ID)
		return ok && cur.State == websub.Active
	})
	return s
}

func (d *downstream) notifications() []received {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]received(nil), d.got...)
}

// changeKey names one change: the aggregator's URI and change time.
func changeKey(e *resourcesync.Entry) string {
	t := e.LastMod
	if e.MD != nil && !e.MD.DateTime.IsZero() {
		t = e.MD.DateTime
	}
	return e.Loc + " " + t.UTC().Format(time.RFC3339Nano)
}

// changeListKeys reads every Change List of collection c over HTTP and
// returns its changes' keys.
func changeListKeys(t testing.TB, base, c string) []string {
	t.Helper()
	var keys []string
	for _, e := range readDoc(t, base+"/"+c+"/changelist.xml") {
		for _, ch := range readDoc(t, e.Loc) {
			keys = append(keys, changeKey(ch))
		}
	}
	return keys
}

// readDoc GETs a ResourceSync document and returns its entries.
func readDoc(t testing.TB, uri string) []*resourcesync.Entry {
	t.Helper()
	resp, err := http.Get(uri)
	if err != nil {
		t.Fatalf("GET %s: %v", uri, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", uri, resp.Status)
	}
	r, err := resourcesync.NewReader(resp.Body, resourcesync.Limits{})
	if err != nil {
		t.Fatalf("reading %s: %v", uri, err)
	}
	var out []*resourcesync.Entry
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("reading %s: %v", uri, err)
		}
		out = append(out, e)
	}
}

// checkNotifications checks what d received against the node's Change
// Lists of c: consecutive from/until, every entry inside its interval
// with a via link to the origin, and every change in exactly one
// notification.
func checkNotifications(t testing.TB, got []received, listed []string, origin string) {
	t.Helper()
	seen := map[string]int{}
	for i, n := range got {
		if i > 0 && !n.from.Equal(got[i-1].until) {
			t.Errorf("notification %d: from %s is not the previous until %s", i, n.from, got[i-1].until)
		}
		if !n.until.After(n.from) {
			t.Errorf("notification %d: until %s not after from %s", i, n.until, n.from)
		}
		for _, e := range n.entries {
			at := e.MD.DateTime
			if !at.After(n.from) || at.After(n.until) {
				t.Errorf("notification %d (%s, %s]: entry %s at %s outside", i, n.from, n.until, e.Loc, at)
			}
			via := ""
			for _, l := range e.Links {
				if l.Rel == "via" {
					via = l.Href
				}
			}
			if len(via) < len(origin) || via[:len(origin)] != origin {
				t.Errorf("entry %s: via %q does not point at the origin %s", e.Loc, via, origin)
			}
			if e.MD.Change != resourcesync.Deleted && (e.MD.Length == nil || len(e.MD.Hash) == 0) {
				t.Errorf("entry %s: no hash or length of the copy", e.Loc)
			}
			seen[changeKey(e)]++
		}
	}
	for k, c := range seen {
		if c != 1 {
			t.Errorf("change %s notified %d times", k, c)
		}
	}
	for _, k := range listed {
		if seen[k] == 0 {
			t.Errorf("change %s of the Change List never notified", k)
		}
	}
	if len(seen) != len(listed) {
		t.Errorf("%d changes notified, the Change Lists show %d", len(seen), len(listed))
	}
	if t.Failed() {
		t.FailNow()
	}
}

func countEntries(got []received) int {
	n := 0
	for _, r := range got {
		n += len(r.entries)
	}
	return n
}
