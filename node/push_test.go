package node

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/sim"
	"github.com/viaduct-mirror/viaduct/websub"
)

// startPushSource serves a simulated Source with a hub until the test ends.
func startPushSource(t testing.TB, cfg sim.Config) (*sim.Server, *sim.Hub) {
	t.Helper()
	src := startSource(t, cfg)
	hub, err := sim.StartHub(context.Background(), src.Source, sim.HubConfig{Window: 5 * time.Millisecond}, nil)
	if err != nil {
		t.Fatalf("sim hub: %v", err)
	}
	t.Cleanup(func() { hub.Close() })
	return src, hub
}

// pushConfig is a node that polls its one Source hourly at most, so that
// whatever arrives sooner came by notification.
func pushConfig(t testing.TB, src *sim.Server, quiet time.Duration) Config {
	cfg := testConfig(t.(interface{ TempDir() string }).TempDir(), sourceConfig("s", src))
	cfg.Harvest.PushSchedule = "@every 1h"
	cfg.Harvest.QuietWindow = quiet
	return cfg
}

// subscribed syncs the Source once (baseline, subscription), then makes
// one change and waits for the catch-up the first notification asks for,
// so that the node is following the hub.
func subscribed(t testing.TB, n *Node, src *sim.Server, hub *sim.Hub, logs *logBuffer) {
	t.Helper()
	mustSync(t, n, "s")
	waitFor(t, 10*time.Second, "the hub to verify the subscription", func() bool { return hub.Subscribers() == 1 })
	src.Update(1)
	waitFor(t, 10*time.Second, "the catch-up after the first notification", func() bool {
		return len(logs.records(map[string]string{"msg": "caught up from the Change List", "reason": "first"})) == 1
	})
	waitFor(t, 30*time.Second, "the copy to match the Source", func() bool { return mirrors(t, n, "s", src) })
}

// mirrors is checkMirror that reports instead of failing.
func mirrors(t testing.TB, n *Node, name string, src *sim.Server) bool {
	t.Helper()
	if !settled(t, n) {
		return false
	}
	ctx := context.Background()
	live := 0
	for uri, it := range src.Snapshot() {
		r, err := n.Catalog().Resource(ctx, name, uri)
		if err != nil && !errors.Is(err, catalog.ErrNotFound) {
			t.Fatalf("catalog: %v", err)
		}
		held := err == nil && !r.Deleted
		if it.Deleted != !held {
			return false
		}
		if !it.Deleted {
			live++
			if r.SHA256 != it.SHA256 || r.Length != it.Length {
				return false
			}
		}
	}
	held := 0
	if err := n.Catalog().SourceResources(ctx, name, name, func(r *catalog.Resource) error {
		if !r.Deleted {
			held++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return held == live
}

// listReads counts the requests for the Source's Capability List and
// Change Lists: what a poll reads.
func listReads(src *sim.Server) int {
	n := 0
	for p, c := range src.Requests() {
		if p == sim.PathCapabilities || strings.HasPrefix(p, "/changelist") {
			n += c
		}
	}
	return n
}

// TestPushConverges: with polling an hour away, a stream of changes at
// the Source reaches the copy through notifications alone.
func TestPushConverges(t *testing.T) {
	src, hub := startPushSource(t, sim.Config{Resources: 200, Seed: 11, MinSize: 16, MaxSize: 512})
	var logs logBuffer
	n := startNode(t, pushConfig(t, src, 0), logs.logger())
	subscribed(t, n, src, hub, &logs)

	src.ResetRequests()
	t.Cleanup(func() {
		if t.Failed() {
			for _, r := range logs.records(map[string]string{}) {
				if r["level"] != "DEBUG" || strings.Contains(r["msg"].(string), "notification") {
					t.Log(r)
				}
			}
		}
	})
	for range 20 {
		before := hub.Made()
		src.Mutate(10)
		waitFor(t, 5*time.Second, "a notification", func() bool { return hub.Made() > before })
	}
	waitFor(t, 30*time.Second, "the copy to match the Source", func() bool { return mirrors(t, n, "s", src) })
	checkMirror(t, n, "s", src)
	checkChangeLog(t, n, "s")
	if r := listReads(src); r != 0 {
		t.Fatalf("the Source's Capability List or Change Lists were read %d times: the copy did not converge by push alone", r)
	}
	if got := logs.records(map[string]string{"msg": "polling Change List"}); len(got) != 1 {
		t.Fatalf("in-order notifications asked for %d catch-ups, want only the first notification's: %v", len(got)-1, got)
	}
}

// TestPushFaultyHub: the hub drops a notification, delivers two out of
// order and then stops; the node catches up from the Change List each
// time, says why, and ends with exactly the Source's state.
func TestPushFaultyHub(t *testing.T) {
	src, hub := startPushSource(t, sim.Config{Resources: 100, Seed: 12, MinSize: 16, MaxSize: 512})
	var logs logBuffer
	n := startNode(t, pushConfig(t, src, 2*time.Second), logs.logger())
	subscribed(t, n, src, hub, &logs)

	batch := func(k int) {
		before := hub.Made()
		src.Mutate(k)
		waitFor(t, 5*time.Second, "a notification", func() bool { return hub.Made() > before })
	}
	hub.DropNext(1)
	batch(5)
	batch(5)
	waitFor(t, 10*time.Second, "the gap to be caught up", func() bool {
		return len(logs.records(map[string]string{"msg": "caught up from the Change List", "reason": "gap"})) > 0
	})
	hub.SwapNext()
	batch(3)
	batch(3)
	waitFor(t, 10*time.Second, "the disorder to be caught up", func() bool {
		return len(logs.records(map[string]string{"msg": "caught up from the Change List", "reason": "out-of-order"})) > 0
	})
	hub.Stop(time.Minute)
	batch(10)
	waitFor(t, 20*time.Second, "the quiet hub to be caught up", func() bool {
		return len(logs.records(map[string]string{"msg": "caught up from the Change List", "reason": "quiet"})) > 0
	})
	waitFor(t, 30*time.Second, "the copy to match the Source", func() bool { return mirrors(t, n, "s", src) })
	checkMirror(t, n, "s", src)
	checkChangeLog(t, n, "s")

	for _, want := range []string{"notification gap from ", "notification out of order", "no notification on topic " + hub.Topic()} {
		recs := logs.records(map[string]string{"msg": want})
		if len(recs) == 0 {
			t.Errorf("no log line saying %q", want)
			continue
		}
		if recs[0]["level"] != "INFO" || recs[0]["source"] != "s" || !strings.Contains(recs[0]["msg"].(string), "polling Change List") {
			t.Errorf("log line %v: want level INFO, source s, and what it does", recs[0])
		}
	}
}

// TestPushForged: notifications with a wrong signature, for another topic,
// or that are not change notifications change nothing.
func TestPushForged(t *testing.T) {
	src, hub := startPushSource(t, sim.Config{Resources: 20, Seed: 13, MinSize: 16, MaxSize: 512})
	var logs logBuffer
	n := startNode(t, pushConfig(t, src, 0), logs.logger())
	subscribed(t, n, src, hub, &logs)
	subs := hub.Subscriptions()
	if len(subs) != 1 {
		t.Fatalf("%d subscriptions at the hub, want 1", len(subs))
	}
	sub := subs[0]
	applied := lastApplied(t, n)
	forged := src.URL + "/res/999999"
	ln := 64
	now := time.Now().UTC()
	payload, err := websub.EncodeNotification(now.Add(-time.Second), now, "", []*resourcesync.Entry{{
		Loc: forged, MD: &resourcesync.MD{Change: resourcesync.Created, DateTime: now.Add(-time.Millisecond), Length: func() *int64 { v := int64(ln); return &v }()},
	}})
	if err != nil {
		t.Fatal(err)
	}
	resourceList := []byte(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/><url><loc>` + forged + `</loc></url></urlset>`)
	cases := []struct {
		name   string
		body   []byte
		sig    string
		self   string
		status int
	}{
		{"bad signature", payload, websub.Sign("not the secret", payload), sub.Topic, http.StatusForbidden},
		{"unsigned", payload, "", sub.Topic, http.StatusForbidden},
		{"wrong topic", payload, websub.Sign(sub.Secret, payload), src.URL + "/other-topic", http.StatusBadRequest},
		{"not a notification", resourceList, websub.Sign(sub.Secret, resourceList), sub.Topic, http.StatusBadRequest},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(http.MethodPost, sub.Callback, bytes.NewReader(c.body))
		req.Header.Set("Content-Type", "application/xml")
		req.Header.Set("Link", "<"+c.self+`>; rel="self", <`+hub.URL()+`>; rel="hub"`)
		if c.sig != "" {
			req.Header.Set(websub.SignatureHeader, c.sig)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s: answered %d, want %d", c.name, resp.StatusCode, c.status)
		}
	}
	if m := streamMsgs(t, n.Queue(), queue.StreamChanges); m != 0 {
		t.Fatalf("%d changes queued after forged notifications", m)
	}
	if got := lastApplied(t, n); got != applied {
		t.Fatalf("catalog moved from event %d to %d after forged notifications", applied, got)
	}
	if _, err := n.Catalog().Resource(context.Background(), "s", forged); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("forged resource in the catalog: %v", err)
	}
	checkMirror(t, n, "s", src)
}
