package node

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/sim"
)

// getStatusBody GETs url and returns its status and body.
func getStatusBody(t testing.TB, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestReloadRepublishesANewSource: a reload that adds a Source with a
// collection of its own republishes that collection at once (Capability
// List, Source Description, hub topic), before the Source's first pass,
// and its resources follow; a reload that also changes a section needing
// a restart is refused whole, saying so, and changes nothing.
func TestReloadRepublishesANewSource(t *testing.T) {
	a := startSource(t, sim.Config{Resources: 5, Seed: 71})
	g := startSource(t, sim.Config{Resources: 9, Seed: 72})
	cfg := testConfig(t.TempDir(), sourceConfig("a", a))
	cfg.Republish.Notify.AllowLoopbackCallbacks = true
	n := startNode(t, cfg, nil)
	ctx := context.Background()

	next := cfg
	next.Sources = append(slices.Clone(cfg.Sources), sourceConfig("gamma", g))
	next.Fill()

	// A change that needs a restart: nothing is reloaded.
	refused := next
	refused.Fetch.Workers++
	res, err := n.ReloadConfig(ctx, refused)
	if err == nil || !strings.Contains(err.Error(), "fetch") || !strings.Contains(err.Error(), "restart") || !slices.Equal(res.NeedRestart, []string{"fetch"}) {
		t.Fatalf("reload with fetch changed: %+v, %v; want it refused, naming fetch and a restart", res, err)
	}
	if code, _ := getStatusBody(t, n.URL()+"/gamma/capabilitylist.xml"); code != http.StatusNotFound {
		t.Fatalf("a refused reload republished gamma: %d", code)
	}

	res, err = n.ReloadConfig(ctx, next)
	if err != nil || !slices.Equal(res.Added, []string{"gamma"}) || !slices.Equal(res.Collections, []string{"gamma"}) {
		t.Fatalf("reload: %+v, %v; want gamma added with its collection", res, err)
	}
	if code, body := getStatusBody(t, n.URL()+"/gamma/capabilitylist.xml"); code != http.StatusOK || !strings.Contains(body, "/gamma/resourcelist.xml") {
		t.Fatalf("gamma's Capability List after the reload: %d %.300s", code, body)
	}
	if code, body := getStatusBody(t, n.URL()+"/.well-known/resourcesync"); code != http.StatusOK || !strings.Contains(body, "/gamma/capabilitylist.xml") {
		t.Fatalf("the Source Description after the reload does not list gamma: %d %.300s", code, body)
	}
	// The hub takes subscriptions to the new topic.
	d := startDownstream(t)
	s := d.subscribe(t, n.URL()+"/hub", n.URL()+"/gamma/notifications")
	waitHubHolds(t, n, s.Callback)

	if code, body := syncSource(t, n, "gamma"); code != http.StatusOK {
		t.Fatalf("sync gamma: %d %s", code, body)
	}
	waitFor(t, time.Minute, "gamma's 9 resources in its Resource List", func() bool {
		code, body := getStatusBody(t, n.URL()+"/gamma/resourcelist.xml")
		return code == http.StatusOK && strings.Count(body, "<url>") == 9
	})
	waitFor(t, time.Minute, "a notification on gamma's topic", func() bool { return len(d.notifications()) > 0 })
}
