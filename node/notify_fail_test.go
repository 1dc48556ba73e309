package node

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/sim"
)

// TestNotificationsFailingSubscriber: a subscriber that fails its first
// deliveries gets them again, in order, and nothing once its lease ends.
func TestNotificationsFailingSubscriber(t *testing.T) {
	src := startSource(t, sim.Config{Resources: 20, Seed: 9, MinSize: 16, MaxSize: 64})
	cfg := notifyConfig(t.TempDir(), src)
	cfg.Republish.Notify.Hub.MinLease = time.Second
	n := startNode(t, cfg, nil)
	topic := n.URL() + "/s/notifications"

	var mu sync.Mutex
	var posts [][]byte
	failures := 3
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			io.WriteString(w, r.URL.Query().Get("hub.challenge"))
			return
		}
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		posts = append(posts, b)
		if failures > 0 {
			failures--
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer cb.Close()
	resp, err := http.PostForm(n.URL()+"/hub", url.Values{"hub.mode": {"subscribe"}, "hub.topic": {topic}, "hub.callback": {cb.URL + "/x"}, "hub.lease_seconds": {"3"}})
	if err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("subscribe: %v %v", resp, err)
	}
	resp.Body.Close()
	waitFor(t, 10*time.Second, "the subscription", func() bool { return len(n.note.Hub().Subscriptions()) == 1 })

	mustSync(t, n, "s")
	waitSettled(t, n, 30*time.Second)
	got := func() [][]byte { mu.Lock(); defer mu.Unlock(); return append([][]byte(nil), posts...) }
	waitFor(t, 20*time.Second, "a delivery after three failures", func() bool { return len(got()) >= 4 })
	p := got()
	for i := 1; i < 4; i++ {
		if !bytes.Equal(p[i], p[0]) {
			t.Fatalf("attempt %d is not the failed notification again", i+1)
		}
	}

	waitFor(t, 10*time.Second, "the lease to end", func() bool { return len(n.note.Hub().Subscriptions()) == 0 })
	before := len(got())
	src.Update(5)
	mustSync(t, n, "s")
	waitSettled(t, n, 30*time.Second)
	waitFor(t, 10*time.Second, "the notifier to publish the updates", func() bool {
		st, err := n.Catalog().CollectionStats(context.Background(), "s")
		b, err2 := notifierState(t, n, "republish/notify/s")
		var cur struct{ Until time.Time }
		return err == nil && err2 == nil && json.Unmarshal(b, &cur) == nil && cur.Until.Equal(st.Last)
	})
	if after := len(got()); after != before {
		t.Fatalf("%d deliveries after the lease ended", after-before)
	}
	if !strings.Contains(string(p[0]), "change-notification") {
		t.Fatalf("delivery is not a change notification: %.200s", p[0])
	}
}
