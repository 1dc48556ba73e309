package node

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/admin"
	"github.com/viaduct-mirror/viaduct/harvester"
	"github.com/viaduct-mirror/viaduct/sim"
)

// sourceView reads one Source from the admin API.
func sourceView(t testing.TB, n *Node, name string) admin.SourceView {
	t.Helper()
	code, body := adminCall(t, "GET", n.AdminURL()+"/admin/sources/"+name, "")
	var v admin.SourceView
	if err := json.Unmarshal([]byte(body), &v); code != http.StatusOK || err != nil {
		t.Fatalf("GET source %s: %d %s (%v)", name, code, body, err)
	}
	return v
}

type syncAnswer struct {
	Merged bool
	State  string
}

func askSync(t testing.TB, n *Node, name string) syncAnswer {
	t.Helper()
	code, body := adminCall(t, "POST", n.AdminURL()+"/admin/sources/"+name+"/sync", "")
	var a syncAnswer
	if err := json.Unmarshal([]byte(body), &a); code != http.StatusAccepted || err != nil {
		t.Fatalf("POST sync %s: %d %s, want 202 at once", name, code, body)
	}
	return a
}

// TestSyncNowAnswersAtOnceAndMerges: a sync request is answered 202 while
// the pass runs; requests made while a pass runs make one more pass,
// however many they are.
func TestSyncNowAnswersAtOnceAndMerges(t *testing.T) {
	src := startSource(t, sim.Config{Resources: 5, Seed: 31})
	// Each pass waits on the Capability List, long enough to ask again.
	setFault(t, src, sim.PathCapabilities, sim.Fault{Delay: 700 * time.Millisecond})
	n := startNode(t, testConfig(t.TempDir(), sourceConfig("s", src)), nil)

	if a := askSync(t, n, "s"); a.Merged || a.State != "queued" {
		t.Fatalf("first request: %+v", a)
	}
	waitFor(t, 20*time.Second, "the first pass to run", func() bool { return sourceView(t, n, "s").State == harvester.StateHarvesting })
	if a := askSync(t, n, "s"); a.Merged {
		t.Fatalf("a request while a pass runs joined that pass: %+v", a)
	}
	for range 8 {
		if a := askSync(t, n, "s"); !a.Merged {
			t.Fatalf("a request while the next pass waits did not join it: %+v", a)
		}
	}
	waitFor(t, 30*time.Second, "both passes to end", func() bool {
		v := sourceView(t, n, "s")
		return v.State != harvester.StateHarvesting && !v.Pending && len(v.Recent) >= 2
	})
	v := sourceView(t, n, "s")
	if len(v.Recent) != 2 || v.LastSuccess.IsZero() || v.State != harvester.StateIdle {
		t.Fatalf("ten requests made %d passes (%+v), want 2", len(v.Recent), v)
	}
	if v.Queued != 5 {
		t.Errorf("changes queued %d, want 5", v.Queued)
	}
}

// switchable serves one sim Source, then another, at the same URL: an
// upstream that replaced its data set.
type switchable struct {
	cur atomic.Pointer[sim.Source]
	srv *httptest.Server
}

func newSwitchable(t *testing.T, cfg sim.Config) *switchable {
	s := &switchable{}
	s.set(t, cfg)
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.cur.Load().Handler().ServeHTTP(w, r) }))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *switchable) set(t *testing.T, cfg sim.Config) *sim.Source {
	src, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.cur.Store(src)
	return src
}

// TestRebaselineRemovesWhatIsGone: after the upstream replaced its data
// set, a re-baseline compares the whole Resource List and leaves the
// catalog holding exactly what the Source holds. (An ordinary pass may
// already find that the new Change Lists start after the cursor and close
// the gap with a baseline, or may see nothing new: it depends on the
// second the new data set's lists start in.)
func TestRebaselineRemovesWhatIsGone(t *testing.T) {
	up := newSwitchable(t, sim.Config{Resources: 40, Seed: 41})
	yes := true
	sc := harvester.SourceConfig{Name: "s", URL: up.srv.URL, Schedule: "@every 1h", AllowLoopback: &yes}
	n := startNode(t, testConfig(t.TempDir(), sc), nil)
	mustSync(t, n, "s")
	waitSettled(t, n, 60*time.Second)

	replaced := up.set(t, sim.Config{Resources: 12, Seed: 42})
	if err := replaced.SetBaseURL(up.srv.URL); err != nil {
		t.Fatal(err)
	}
	mustSync(t, n, "s")
	waitSettled(t, n, 60*time.Second)

	code, body := adminCall(t, "POST", n.AdminURL()+"/admin/sources/s/rebaseline?wait=true", "")
	if code != http.StatusOK {
		t.Fatalf("re-baseline: %d %s", code, body)
	}
	waitSettled(t, n, 60*time.Second)
	checkHeld(t, n, "s", replaced.Snapshot())
	if v := sourceView(t, n, "s"); !v.LastPass.Rebaseline || v.LastPass.Error != "" {
		t.Errorf("last pass %+v, want a successful re-baseline", v.LastPass)
	}
}

type deadView struct {
	Seq      uint64
	Source   string
	Kind     string
	Reason   string
	Evidence map[string]string
}

func listDead(t testing.TB, n *Node, query string) []deadView {
	t.Helper()
	code, body := adminCall(t, "GET", n.AdminURL()+"/admin/deadletters"+query, "")
	var out []deadView
	if err := json.Unmarshal([]byte(body), &out); code != http.StatusOK || err != nil {
		t.Fatalf("GET dead letters%s: %d %s", query, code, body)
	}
	return out
}

// TestDeadLettersThroughTheAdminAPI: a bitstream the upstream refuses is
// dead-lettered with its evidence; once the upstream serves it, retrying
// it through the API brings it into the catalog; another is purged.
func TestDeadLettersThroughTheAdminAPI(t *testing.T) {
	src := startSource(t, sim.Config{Resources: 10, Seed: 51})
	other := startSource(t, sim.Config{Resources: 4, Seed: 52})
	setFault(t, src, "/res/3", sim.Fault{Status: http.StatusForbidden})
	setFault(t, other, "/res/2", sim.Fault{WrongLength: true})
	n := startNode(t, testConfig(t.TempDir(), sourceConfig("s", src), sourceConfig("o", other)), nil)
	mustSync(t, n, "s")
	mustSync(t, n, "o")
	waitSettled(t, n, 60*time.Second)

	dead := listDead(t, n, "?source=s")
	if len(dead) != 1 || dead[0].Kind != "upstream" || dead[0].Evidence["uri"] != src.URL+"/res/3" {
		t.Fatalf("dead letters of s: %+v, want /res/3, upstream (403)", dead)
	}
	if all := listDead(t, n, ""); len(all) != 2 {
		t.Fatalf("%d dead letters in all, want 2", len(all))
	}
	if v := sourceView(t, n, "s"); v.DeadLetters != 1 {
		t.Errorf("source s reports %d dead letters, want 1", v.DeadLetters)
	}
	code, body := adminCall(t, "POST", n.AdminURL()+"/admin/deadletters/retry", "")
	if code != http.StatusBadRequest {
		t.Errorf("retry with neither source nor all: %d %s, want 400", code, body)
	}

	src.ClearFault("/res/3")
	if code, body := adminCall(t, "POST", n.AdminURL()+"/admin/deadletters/"+itoa(dead[0].Seq)+"/retry", ""); code != http.StatusOK {
		t.Fatalf("retry: %d %s", code, body)
	}
	waitSettled(t, n, 60*time.Second)
	if again := listDead(t, n, "?source=s"); len(again) != 0 {
		t.Fatalf("retried change dead-lettered again: %+v", again)
	}
	checkHeld(t, n, "s", src.Snapshot())
	if code, _ := adminCall(t, "GET", n.AdminURL()+"/admin/deadletters/"+itoa(dead[0].Seq), ""); code != http.StatusNotFound {
		t.Errorf("the retried dead letter is still shown: %d", code)
	}

	if code, body := adminCall(t, "POST", n.AdminURL()+"/admin/deadletters/purge?source=o", ""); code != http.StatusOK || !jsonHas(body, "purged", 1) {
		t.Fatalf("purge source o: %d %s", code, body)
	}
	if all := listDead(t, n, ""); len(all) != 0 {
		t.Fatalf("dead letters left: %+v", all)
	}
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

func jsonHas(body, key string, want float64) bool {
	var m map[string]any
	return json.Unmarshal([]byte(body), &m) == nil && m[key] == want
}

// TestReloadAddsAndRemovesSources: a reload adds a Source, which gets its
// first pass at once, and removes one, which is no longer listed.
func TestReloadAddsAndRemovesSources(t *testing.T) {
	a := startSource(t, sim.Config{Resources: 5, Seed: 61})
	b := startSource(t, sim.Config{Resources: 7, Seed: 62})
	cfg := testConfig(t.TempDir(), sourceConfig("a", a), sourceConfig("b", b))
	cfg.Harvest.ImmediateFirstPass = true
	n := startNode(t, cfg, nil)
	next := cfg
	bb := sourceConfig("b", b)
	next.Sources = []harvester.SourceConfig{sourceConfig("a", a), bb}
	next.Sources[0].Name = "a2" // a replaced by a2, same upstream, collection b
	next.Sources[0].Collection = "b"
	next.Fill()
	n.SetReloader(func(ctx context.Context) (any, error) { return n.ReloadConfig(ctx, next) })

	code, body := adminCall(t, "POST", n.AdminURL()+"/admin/reload", "")
	var res ReloadResult
	if err := json.Unmarshal([]byte(body), &res); code != http.StatusOK || err != nil {
		t.Fatalf("reload: %d %s", code, body)
	}
	if len(res.Added) != 1 || res.Added[0] != "a2" || len(res.Removed) != 1 || res.Removed[0] != "a" || res.Unchanged != 1 {
		t.Fatalf("reload result %+v", res)
	}
	var v admin.SourceView
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("a2: %+v", v)
		}
	})
	waitFor(t, 30*time.Second, "a2's first pass, without being asked", func() bool {
		v = sourceView(t, n, "a2")
		return v.LastSuccess.After(time.Time{}) && v.Queued == 5
	})
	code, _ = adminCall(t, "GET", n.AdminURL()+"/admin/sources/a", "")
	if code != http.StatusNotFound {
		t.Errorf("removed Source a still listed: %d", code)
	}
}
