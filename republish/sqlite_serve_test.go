package republish

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// upstreamFacts is what an origin said of one version of a resource, as the
// via link must carry it.
type upstreamFacts struct {
	origin   string
	modified time.Time
	md5      string
	body     string
}

// TestSQLiteServesAppliedEvents applies a few dozen events to a real
// catalog, with their bitstreams in a directory store, and reads the
// republished Source as a Destination would.
func TestSQLiteServesAppliedEvents(t *testing.T) {
	f := newSQLiteFixture(t, Config{})
	origT := time.Date(2023, 11, 5, 9, 30, 0, 0, time.UTC)
	var created []upstreamFacts // in change order
	held := map[string]upstreamFacts{}
	at := base
	next := func() time.Time { at = at.Add(10 * time.Second); return at }
	emit := func(source, uri, op string, v upstreamFacts, links []resourcesync.Link, when time.Time) {
		n := int64(len(v.body))
		ev := &viaduct.Event{Source: source, Collection: "alpha", URI: uri, Op: op, Type: "text/plain",
			Upstream: viaduct.Change{Source: source, Collection: "alpha", URI: uri, Op: op, Time: v.modified,
				Modified: v.modified, Type: "text/plain", Links: links}}
		if op != resourcesync.Deleted {
			ev.Upstream.Hash = resourcesync.Hashes{{Alg: resourcesync.MD5, Value: v.md5}}
			ev.Upstream.Length = &n
		}
		f.apply(t, when, ev, []byte(v.body))
	}
	// 30 resources straight from their origin.
	for i := range 30 {
		uri := fmt.Sprintf("http://origin.example.com/items/%02d.txt", i)
		v := upstreamFacts{origin: uri, modified: origT.Add(time.Duration(i) * time.Minute), body: fmt.Sprintf("item %02d", i)}
		v.md5, _ = sum(v.body)
		emit("origin", uri, resourcesync.Created, v, nil, next())
		created, held[uri] = append(created, v), v
	}
	// 4 through an upstream aggregator, whose via links name the origin.
	for i := range 4 {
		origin := fmt.Sprintf("http://far.example.net/%d.txt", i)
		harvested := "http://agg1.example.org/alpha/r/http/far.example.net/" + fmt.Sprint(i) + ".txt"
		v := upstreamFacts{origin: origin, modified: origT.Add(-time.Duration(i+1) * time.Hour), body: fmt.Sprintf("far %d", i)}
		v.md5, _ = sum(v.body)
		n := int64(len(v.body))
		via := []resourcesync.Link{{Rel: "via", Href: origin, Modified: v.modified, Length: &n,
			Hash: resourcesync.Hashes{{Alg: resourcesync.MD5, Value: v.md5}}}}
		// The aggregator's own times and hashes are not the origin's.
		agg := upstreamFacts{modified: base, md5: strings.Repeat("0", 32), body: v.body}
		emit("agg1", harvested, resourcesync.Created, agg, via, next())
		created, held[origin] = append(created, v), v
	}
	// In the next period: an update, a deletion, and a re-announcement of
	// bytes already held, which changes nothing.
	upd := upstreamFacts{origin: created[3].origin, modified: origT.Add(48 * time.Hour), body: "item 03, revised"}
	upd.md5, _ = sum(upd.body)
	emit("origin", upd.origin, resourcesync.Updated, upd, nil, base.Add(70*time.Minute))
	held[upd.origin] = upd
	emit("origin", created[5].origin, resourcesync.Deleted, upstreamFacts{modified: origT.Add(49 * time.Hour)}, nil, base.Add(75*time.Minute))
	delete(held, created[5].origin)
	emit("origin", created[7].origin, resourcesync.Updated, created[7], nil, base.Add(80*time.Minute))

	// Resource List: every held resource once, with its current copy and
	// the origin's facts in its via link.
	entries := readDoc(t, f.fixture, "/alpha/resourcelist.xml", resourcesync.CapResourceList)
	if len(entries) != len(held) {
		t.Errorf("resource list has %d entries, want %d", len(entries), len(held))
	}
	seen := map[string]bool{}
	for _, e := range entries {
		via := viaOf(t, e)
		want, ok := held[via.Href]
		if !ok || seen[via.Href] {
			t.Errorf("resource list: unexpected or repeated entry %s (via %s)", e.Loc, via.Href)
			continue
		}
		seen[via.Href] = true
		checkVia(t, e.Loc, via, want)
		if loc, _ := f.srv.ResourceURI("alpha", want.origin); e.Loc != loc {
			t.Errorf("loc %s, want %s", e.Loc, loc)
		}
		_, sha := sum(want.body)
		if e.MD == nil || e.MD.Hash.Get(resourcesync.SHA256) != sha || e.MD.Length == nil || *e.MD.Length != int64(len(want.body)) {
			t.Errorf("%s: copy facts %+v, want sha-256 %s length %d", e.Loc, e.MD, sha, len(want.body))
		}
	}

	// Change Lists: the first period holds every creation, each via link
	// as the origin stated it then; the open one the update and deletion.
	readDoc(t, f.fixture, "/alpha/changelist.xml", resourcesync.CapChangeList)
	closed := readDoc(t, f.fixture, "/alpha/changelist/20240501T100000Z.xml", resourcesync.CapChangeList)
	if len(closed) != len(created) {
		t.Fatalf("closed change list has %d entries, want %d", len(closed), len(created))
	}
	prev := time.Time{}
	for i, e := range closed {
		if e.MD.Change != resourcesync.Created || !e.MD.DateTime.After(prev) {
			t.Errorf("entry %d: change %q at %s after %s", i, e.MD.Change, e.MD.DateTime, prev)
		}
		prev = e.MD.DateTime
		checkVia(t, e.Loc, viaOf(t, e), created[i])
	}
	open := readDoc(t, f.fixture, "/alpha/changelist/20240501T110000Z.xml", resourcesync.CapChangeList)
	if len(open) != 2 || open[0].MD.Change != resourcesync.Updated || open[1].MD.Change != resourcesync.Deleted {
		t.Fatalf("open change list: %d entries %v, want an update then a deletion", len(open), open)
	}
	checkVia(t, open[0].Loc, viaOf(t, open[0]), upd)
	if via := viaOf(t, open[1]); via.Href != created[5].origin || !via.Modified.Equal(origT.Add(49*time.Hour)) {
		t.Errorf("deletion's via link %+v", via)
	}

	// Bitstreams: current bytes, deleted 410, never held 404.
	for origin, v := range held {
		resp, body := f.get(t, resourcePathOf(t, f.fixture, origin))
		_, sha := sum(v.body)
		if resp.StatusCode != http.StatusOK || string(body) != v.body || resp.Header.Get("ETag") != `"`+sha+`"` {
			t.Errorf("GET copy of %s: %s %q etag %s, want %q", origin, resp.Status, body, resp.Header.Get("ETag"), v.body)
		}
	}
	if resp, _ := f.get(t, resourcePathOf(t, f.fixture, created[5].origin)); resp.StatusCode != http.StatusGone {
		t.Errorf("deleted resource: %s, want 410", resp.Status)
	}
	if resp, _ := f.get(t, resourcePathOf(t, f.fixture, "http://origin.example.com/items/99.txt")); resp.StatusCode != http.StatusNotFound {
		t.Errorf("never held: %s, want 404", resp.Status)
	}
	// The harvested URI of a chained resource is not its name here.
	if resp, _ := f.get(t, resourcePathOf(t, f.fixture, "http://agg1.example.org/alpha/r/http/far.example.net/1.txt")); resp.StatusCode != http.StatusNotFound {
		t.Errorf("by upstream aggregator's URI: %s, want 404", resp.Status)
	}

	for _, p := range []string{"/.well-known/resourcesync", "/alpha/capabilitylist.xml", "/beta/resourcelist.xml", "/beta/changelist.xml"} {
		resp, body := f.get(t, p)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s", p, resp.Status)
		}
		validate(t, p, body)
	}
}

// readDoc GETs a document, validates it and returns its entries.
func readDoc(t *testing.T, f *fixture, path, capability string) []*resourcesync.Entry {
	t.Helper()
	resp, body := f.get(t, path)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", path, resp.Status)
	}
	validate(t, path, body)
	rd, err := resourcesync.NewReader(strings.NewReader(string(body)), resourcesync.DefaultLimits())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if got := rd.Header().MD.Capability; got != capability {
		t.Fatalf("%s: capability %q, want %q", path, got, capability)
	}
	var out []*resourcesync.Entry
	for {
		e, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		c := *e
		out = append(out, &c)
	}
}

// viaOf returns the entry's one via link.
func viaOf(t *testing.T, e *resourcesync.Entry) resourcesync.Link {
	t.Helper()
	var vias []resourcesync.Link
	for _, l := range e.Links {
		if l.Rel == "via" {
			vias = append(vias, l)
		}
	}
	if len(vias) != 1 {
		t.Fatalf("%s: %d via links, want 1", e.Loc, len(vias))
	}
	return vias[0]
}

// checkVia compares a via link with what the origin said.
func checkVia(t *testing.T, loc string, via resourcesync.Link, want upstreamFacts) {
	t.Helper()
	if via.Href != want.origin || !via.Modified.Equal(want.modified) || via.Hash.Get(resourcesync.MD5) != want.md5 ||
		via.Length == nil || *via.Length != int64(len(want.body)) {
		t.Errorf("%s: via %+v (length %v), want %s modified %s md5 %s length %d", loc, via, via.Length,
			want.origin, want.modified, want.md5, len(want.body))
	}
}

// resourcePathOf is the path of the aggregator's copy of origin.
func resourcePathOf(t *testing.T, f *fixture, origin string) string {
	t.Helper()
	u, err := f.srv.ResourceURI("alpha", origin)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(u, f.srv.cfg.BaseURL)
}
