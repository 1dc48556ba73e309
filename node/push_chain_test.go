package node

import (
	"bufio"
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/sim"
)

// TestPushChain follows changes pushed all the way down: the simulated
// Source's hub notifies node A; A's own hub notifies a Destination
// subscribed to A's topic and node B, which harvests A and subscribed to
// A's hub through the channel A's Capability List advertises. With both
// nodes' polls and push schedules an hour away, B's copy reaches the
// Source's state by notifications alone: after setup B reads none of A's
// Capability Lists or Change Lists. The Destination is told of every
// change A lists, once, each with a via link to the origin carrying the
// origin's hash. The metrics of both sides count what happened.
func TestPushChain(t *testing.T) {
	src, hub := startPushSource(t, sim.Config{Resources: 150, Seed: 31, MinSize: 16, MaxSize: 512})
	var aLogs, bLogs logBuffer
	acfg := pushConfig(t, src, 0)
	acfg.Republish.Notify.AllowLoopbackCallbacks = true
	acfg.Republish.Notify.Window = 20 * time.Millisecond
	a := startNode(t, acfg, aLogs.logger())
	topic := a.URL() + "/s/notifications"
	d := startDownstream(t)
	d.subscribeTo(t, a)
	subscribed(t, a, src, hub, &aLogs)

	bcfg := testConfig(t.TempDir(), nodeSource("a", a))
	bcfg.Harvest.PushSchedule = "@every 1h"
	b := startNode(t, bcfg, bLogs.logger())
	mustSync(t, b, "a")
	waitFor(t, 10*time.Second, "A's hub to verify B's subscription", func() bool {
		for _, s := range a.note.Hub().Subscriptions() {
			if strings.HasPrefix(s.Callback, b.URL()+PathCallbacks) && s.Topic == topic {
				return true
			}
		}
		return false
	})
	src.Update(1)
	waitFor(t, 10*time.Second, "B's catch-up after its first notification", func() bool {
		return len(bLogs.records(map[string]string{"msg": "caught up from the Change List", "reason": "first"})) == 1
	})
	waitFor(t, 30*time.Second, "B's copy to match the Source", func() bool { return chainMirrors(t, b, "a", src) })

	t.Cleanup(func() {
		if t.Failed() {
			for _, r := range bLogs.records(map[string]string{"msg": "notification"}) {
				t.Log("B:", r)
			}
		}
	})
	src.ResetRequests()
	polls := listRequests(t, a)
	bPasses := len(bLogs.records(map[string]string{"msg": "caught up from the Change List"}))
	for range 15 {
		before := hub.Made()
		src.Mutate(8)
		waitFor(t, 5*time.Second, "a notification from the Source", func() bool { return hub.Made() > before })
	}
	src.Create(10)
	src.Delete(5)
	waitFor(t, 30*time.Second, "B's copy to match the Source", func() bool { return chainMirrors(t, b, "a", src) })
	if got := listRequests(t, a) - polls; got != 0 {
		t.Fatalf("B read A's Capability List or Change Lists %d times after setup: B did not converge by push alone", got)
	}
	if got := len(bLogs.records(map[string]string{"msg": "caught up from the Change List"})) - bPasses; got != 0 {
		t.Fatalf("B caught up from A's Change List %d times after setup", got)
	}
	if r := listReads(src); r != 0 {
		t.Fatalf("A read the Source's Capability List or Change Lists %d times: A did not follow by push alone", r)
	}

	waitSettled(t, a, 30*time.Second)
	listed := changeListKeys(t, a.URL(), "s")
	waitFor(t, 20*time.Second, "every change of A to reach the Destination", func() bool { return countEntries(d.notifications()) >= len(listed) })
	got := d.notifications()
	checkNotifications(t, got, listed, src.URL)
	checkOriginHashes(t, got, src)
	ch := chain{src: src, a: a, b: b, aColl: "s", bColl: "a"}
	ch.check(t)
	checkPushMetrics(t, a, b, d)
}

// chainMirrors reports whether n's collection coll, harvested from
// another node, holds exactly the Source's live resources with the
// Source's bytes, matched by origin URI.
func chainMirrors(t testing.TB, n *Node, coll string, src *sim.Server) bool {
	t.Helper()
	if !settled(t, n) {
		return false
	}
	snap := src.Snapshot()
	held, ok := 0, true
	err := n.Catalog().Resources(context.Background(), coll, "", 0, func(r *catalog.Resource) error {
		if r.Deleted {
			return nil
		}
		held++
		it, in := snap[r.Origin]
		if !in || it.Deleted || it.SHA256 != r.SHA256 || it.Length != r.Length {
			ok = false
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walking %s: %v", coll, err)
	}
	return ok && held == src.Len()
}

// checkOriginHashes checks that every notified change's via link carries
// the origin's hash and length, equal to the copy's, and that the last
// change notified of each origin URI is the origin's present state.
func checkOriginHashes(t testing.TB, got []received, src *sim.Server) {
	t.Helper()
	last := map[string]*resourcesync.Entry{}
	for _, r := range got {
		for _, e := range r.entries {
			via := e.Link("via")
			if via == nil {
				t.Fatalf("notified change of %s has no via link", e.Loc)
			}
			last[via.Href] = e
			if e.MD.Change == resourcesync.Deleted {
				continue
			}
			if h := via.Hash.Get(resourcesync.SHA256); h == "" || h != e.MD.Hash.Get(resourcesync.SHA256) || via.Length == nil || *via.Length != *e.MD.Length {
				t.Errorf("notified change of %s: via %s %v, copy %s %v: want the origin's hash and length, equal to the copy's", e.Loc, via.Hash, via.Length, e.MD.Hash, *e.MD.Length)
			}
		}
	}
	for uri, it := range src.Snapshot() {
		e, ok := last[uri]
		if !ok {
			continue // not changed since the Destination subscribed
		}
		if deleted := e.MD.Change == resourcesync.Deleted; deleted != it.Deleted {
			t.Errorf("last notified change of %s is %s, the origin has deleted=%v", uri, e.MD.Change, it.Deleted)
		} else if !deleted && e.Link("via").Hash.Get(resourcesync.SHA256) != it.SHA256 {
			t.Errorf("last notified change of %s says origin hash %s, the origin has %s", uri, e.Link("via").Hash, it.SHA256)
		}
	}
}

// listRequests is how many times n has served a Capability List, Change
// List or Change List Index, from its own metrics: what a poll reads.
func listRequests(t testing.TB, n *Node) int {
	t.Helper()
	return int(metric(t, n, "viaduct_republish_requests_total", `doc="capabilitylist"`) +
		metric(t, n, "viaduct_republish_requests_total", `doc="changelist`))
}

// metric scrapes n's /metrics (admin listener) and sums the samples of name whose labels
// contain every one of labels; -1 when there is none.
func metric(t testing.TB, n *Node, name string, labels ...string) float64 {
	t.Helper()
	resp, err := http.Get(n.AdminURL() + "/metrics")
	if err != nil {
		t.Fatalf("metrics: %v", err)
	}
	defer resp.Body.Close()
	total, found := 0.0, false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		l := sc.Text()
		if !strings.HasPrefix(l, name+"{") && !strings.HasPrefix(l, name+" ") {
			continue
		}
		sp := strings.LastIndexByte(l, ' ')
		match := true
		for _, lb := range labels {
			match = match && strings.Contains(l[:sp], lb)
		}
		if !match {
			continue
		}
		v, err := strconv.ParseFloat(l[sp+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", l, err)
		}
		total, found = total+v, true
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("metrics: %v", err)
	}
	if !found {
		return -1
	}
	return total
}

// checkPushMetrics checks what A and B report of the notifications they
// took and sent, and that a forged notification B refuses is counted
// with its reason.
func checkPushMetrics(t *testing.T, a, b *Node, d *downstream) {
	t.Helper()
	waitFor(t, 10*time.Second, "A's delivery queues to empty", func() bool { return metric(t, a, "viaduct_notify_queued") == 0 })
	notes := float64(len(d.notifications()))
	if got := metric(t, a, "viaduct_harvester_notifications_received_total", `source="s"`); got < 15 {
		t.Errorf("A counts %v notifications received from the Source, want at least 15", got)
	}
	if got := metric(t, a, "viaduct_harvester_notification_catchups_total", `source="s"`, `reason="first"`); got != 1 {
		t.Errorf("A counts %v catch-ups after a first notification, want 1", got)
	}
	// A's notifier gathers what changed in one window into one payload, so
	// under load two of the Source's batches can reach B as one: B's count
	// is bounded by the batches, not equal to them.
	bGot := metric(t, b, "viaduct_harvester_notifications_received_total", `source="a"`)
	if bGot < 1 || bGot > notes {
		t.Errorf("B counts %v notifications received from A, want between 1 and the %v the Destination took", bGot, notes)
	}
	if got := metric(t, a, "viaduct_notify_payloads_published_total", `collection="s"`); got < notes {
		t.Errorf("A counts %v payloads published, the Destination took %v", got, notes)
	}
	if got := metric(t, a, "viaduct_notify_deliveries_total", `result="ok"`); got != notes+bGot {
		t.Errorf("A counts %v deliveries taken, the Destination took %v and B %v", got, notes, bGot)
	}
	if got := metric(t, a, "viaduct_notify_deliveries_total", `result="failed"`); got > 0 {
		t.Errorf("A counts %v failed deliveries, want none", got)
	}
	if got := metric(t, a, "viaduct_notify_subscribers"); got != 2 {
		t.Errorf("A counts %v subscribers, want 2", got)
	}

	var cb string
	for _, s := range a.note.Hub().Subscriptions() {
		if strings.HasPrefix(s.Callback, b.URL()) {
			cb = s.Callback
		}
	}
	resp, err := http.Post(cb, "application/xml", strings.NewReader("<urlset/>"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("an unsigned notification to B was answered %s, want 403", resp.Status)
	}
	if got := metric(t, b, "viaduct_harvester_notifications_rejected_total", `source="a"`, `reason="signature"`); got != 1 {
		t.Errorf("B counts %v notifications rejected for their signature, want 1", got)
	}
}
