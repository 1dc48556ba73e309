package node

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/sim"
)

// notifyConfig is testConfig with loopback callbacks allowed and small
// payloads, so that a few hundred changes are split.
func notifyConfig(dataDir string, src *sim.Server) Config {
	cfg := testConfig(dataDir, sourceConfig("s", src))
	cfg.Republish.Notify.AllowLoopbackCallbacks = true
	cfg.Republish.Notify.MaxEntries = 100
	cfg.Republish.Notify.Hub.RetryMin = 20 * time.Millisecond
	cfg.Republish.Notify.Hub.RetryMax = 100 * time.Millisecond
	return cfg
}

// TestNotificationsDownstream subscribes a Destination to a node's topic,
// harvests a Source and changes it, and checks that the Destination is
// told of every change the Change Lists show, once, in consecutive
// notifications whose entries point at the origin.
func TestNotificationsDownstream(t *testing.T) {
	src := startSource(t, sim.Config{Resources: 250, Seed: 3, MinSize: 16, MaxSize: 256})
	n := startNode(t, notifyConfig(t.TempDir(), src), nil)
	topic, hub := n.URL()+"/s/notifications", n.URL()+"/hub"

	var capEntry *resourcesync.Entry
	for _, e := range readDoc(t, n.URL()+"/s/capabilitylist.xml") {
		if e.MD != nil && e.MD.Capability == resourcesync.CapChangeNotification {
			capEntry = e
		}
	}
	if capEntry == nil || capEntry.Loc != topic || len(capEntry.Links) != 1 || capEntry.Links[0].Rel != "hub" || capEntry.Links[0].Href != hub {
		t.Fatalf("Capability List's change-notification entry = %+v, want %s with hub %s", capEntry, topic, hub)
	}
	resp, err := http.Head(topic)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want := "<" + topic + `>; rel="self", <` + hub + `>; rel="hub"`; resp.StatusCode != 200 || resp.Header.Get("Link") != want {
		t.Fatalf("HEAD topic: %s, Link %q, want %q", resp.Status, resp.Header.Get("Link"), want)
	}

	d := startDownstream(t)
	d.subscribeTo(t, n)

	mustSync(t, n, "s")
	waitSettled(t, n, 30*time.Second)
	src.Create(40)
	src.Update(60)
	src.Delete(30)
	mustSync(t, n, "s")
	waitSettled(t, n, 30*time.Second)

	listed := changeListKeys(t, n.URL(), "s")
	if len(listed) < 300 {
		t.Fatalf("the Change Lists show %d changes, want at least %d", len(listed), 300)
	}
	waitFor(t, 20*time.Second, "every change to be notified", func() bool { return countEntries(d.notifications()) >= len(listed) })
	got := d.notifications()
	checkNotifications(t, got, listed, src.URL)
	for _, r := range got {
		if len(r.entries) > 100 {
			t.Fatalf("a notification of %d entries, more than max_entries 100", len(r.entries))
		}
	}
}

// TestNotificationsSurviveRestart stops the node after a first harvest and
// starts it again on the same data directory and address: the subscription
// is still there, and the next changes reach the same callback in
// notifications that continue the previous ones.
func TestNotificationsSurviveRestart(t *testing.T) {
	src := startSource(t, sim.Config{Resources: 30, Seed: 5, MinSize: 16, MaxSize: 256})
	cfg := notifyConfig(t.TempDir(), src)
	cfg.Listen = testutil.FixedAddr(t)
	n := startNode(t, cfg, nil)
	topic := n.URL() + "/s/notifications"
	d := startDownstream(t)
	d.subscribeTo(t, n)

	mustSync(t, n, "s")
	waitSettled(t, n, 30*time.Second)
	waitFor(t, 20*time.Second, "the baseline to be notified", func() bool { return countEntries(d.notifications()) >= 30 })
	if err := n.Close(); err != nil {
		t.Fatalf("closing the node: %v", err)
	}

	n = startNode(t, cfg, nil)
	if subs := n.note.Hub().Subscriptions(); len(subs) != 1 || subs[0].Topic != topic {
		t.Fatalf("after restart the hub holds %+v, want the one subscription to %s", subs, topic)
	}
	src.Update(10)
	src.Create(5)
	mustSync(t, n, "s")
	waitSettled(t, n, 30*time.Second)
	listed := changeListKeys(t, n.URL(), "s")
	waitFor(t, 20*time.Second, "the changes after the restart to be notified", func() bool { return countEntries(d.notifications()) >= len(listed) })
	checkNotifications(t, d.notifications(), listed, src.URL)
	if !strings.HasPrefix(listed[len(listed)-1], n.URL()) {
		t.Fatalf("last change %s is not the node's", listed[len(listed)-1])
	}
}
