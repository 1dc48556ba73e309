package republish

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// TestSQLitePartsMatchMemory cuts a Resource List whose parts end by the
// entry limit and by the byte limit (entries of very different sizes, one
// larger than a part's budget by itself) and checks that the catalog's
// own cut (from the sizes it keeps) gives the memory catalog's index and
// parts byte for byte.
func TestSQLitePartsMatchMemory(t *testing.T) {
	cfg := Config{MaxEntries: 4, MaxBytes: 6000}
	mem := newFixture(t, cfg)
	for i := range 23 {
		up := viaduct.Change{Source: "origin"}
		for j := range i % 5 {
			up.Links = append(up.Links, resourcesync.Link{Rel: "alternate", Href: fmt.Sprintf("http://origin.example.com/r%03d/alt%d", i, j)},
				resourcesync.Link{Rel: "describedby", Href: "http://origin.example.com/meta?a=1&b=" + strings.Repeat("<x>", i)})
		}
		if i == 11 {
			up.Links = append(up.Links, resourcesync.Link{Rel: "via", Href: "http://far.example.net/" + strings.Repeat("big&", 300)})
		}
		mem.add("alpha", fmt.Sprintf("http://origin.example.com/r%03d", i), "created", base.Add(time.Duration(i)*time.Second), "x", "text/plain", up)
	}
	mem.add("alpha", "http://origin.example.com/r004", "deleted", base.Add(time.Minute), "", "", viaduct.Change{Source: "origin"})
	f := newSQLiteFixture(t, cfg)
	f.replay(t, mem.cat, mem.blobs)

	_, parts, _ := mem.locs(t, "/alpha/resourcelist.xml")
	if len(parts) < 6 {
		t.Fatalf("%d parts: the fixture should need more", len(parts))
	}
	for _, name := range append([]string{"/alpha/resourcelist.xml"}, parts...) {
		name = strings.TrimPrefix(name, mem.srv.cfg.BaseURL)
		wantResp, want := mem.get(t, name)
		gotResp, got := f.get(t, name)
		// The catalog names its index's snapshot in the part URIs; the
		// memory catalog has none.
		got = snapshotParam.ReplaceAll(got, nil)
		if gotResp.StatusCode != wantResp.StatusCode || !bytes.Equal(got, want) {
			t.Errorf("GET %s from SQLite: %s\n%s\nfrom memory: %s\n%s", name, gotResp.Status, got, wantResp.Status, want)
		}
		if int64(len(want)) > cfg.MaxBytes && !strings.Contains(string(want), "big&amp;") {
			t.Errorf("GET %s: %d bytes, over the limit", name, len(want))
		}
	}
}

// snapshotParam is the seq parameter of a part URI.
var snapshotParam = regexp.MustCompile(`(&amp;|\?)seq=[0-9]+`)

// countingPlanner counts the plans the server asks the catalog for.
type countingPlanner struct {
	*SQLiteCatalog
	plans int
}

func (c *countingPlanner) PlanResources(ctx context.Context, collection string, maxEntries int, perRef, budget int64) ([]catalog.Cut, uint64, error) {
	c.plans++
	return c.SQLiteCatalog.PlanResources(ctx, collection, maxEntries, perRef, budget)
}

// TestSQLitePlanFollowsCatalog checks that a Resource List Index is
// planned once per catalog state: asked again with nothing changed, the
// server reuses its plan; after a change, even one that moves no count
// or time of the collection (a Source's new word on a resource whose copy
// stays), it plans again, and the index it serves is the one a server
// that never planned before would serve.
func TestSQLitePlanFollowsCatalog(t *testing.T) {
	ctx := context.Background()
	cfg := Config{MaxEntries: 3, MaxBytes: 6000}
	f := newSQLiteFixture(t, cfg)
	cat := &countingPlanner{SQLiteCatalog: FromSQLite(f.cat)}
	f.srv.cat = cat
	body := []byte("same body")
	event := func(name string, links ...resourcesync.Link) *viaduct.Event {
		uri := "http://origin.example.com/" + name
		return &viaduct.Event{Source: "origin", Collection: "alpha", URI: uri, Op: resourcesync.Created, Type: "text/plain",
			Upstream: viaduct.Change{Source: "origin", Collection: "alpha", URI: uri, Op: resourcesync.Created, Links: links}}
	}
	for i := range 7 {
		f.apply(t, base.Add(time.Duration(i)*time.Second), event(fmt.Sprintf("r%02d", i)), body)
	}
	// check fetches the index twice, then every part, and compares the
	// plan with a fresh server's.
	check := func(step string, wantPlans, wantParts int) {
		t.Helper()
		_, parts, _ := f.locs(t, "/alpha/resourcelist.xml")
		f.locs(t, "/alpha/resourcelist.xml")
		if cat.plans != wantPlans {
			t.Errorf("%s: %d plans made, want %d", step, cat.plans, wantPlans)
		}
		if len(parts) != wantParts {
			t.Errorf("%s: %d parts, want %d", step, len(parts), wantParts)
		}
		seen := map[string]int{}
		for _, p := range parts {
			_, uris, _ := f.locs(t, strings.TrimPrefix(p, f.srv.cfg.BaseURL))
			if len(uris) > cfg.MaxEntries || len(uris) == 0 {
				t.Errorf("%s: part %s has %d entries", step, p, len(uris))
			}
			for _, u := range uris {
				seen[u]++
			}
		}
		st, err := cat.Stats(ctx, "alpha")
		if err != nil || int64(len(seen)) != st.Resources {
			t.Errorf("%s: parts list %d resources, catalog holds %d (%v)", step, len(seen), st.Resources, err)
		}
		fresh := *f.srv
		fresh.cat, fresh.plans = FromSQLite(f.cat), newPlanCache()
		rev, err := f.srv.revision(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want, _, err := fresh.plan(ctx, "alpha", rev)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := f.srv.plan(ctx, "alpha", rev)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: plan %v, %v; a fresh server's %v", step, got, err, want)
		}
	}
	check("start", 1, 3)
	if err := f.cat.Skip(ctx, f.seq+1); err != nil {
		t.Fatal(err)
	}
	f.seq++
	check("after a skipped event", 2, 3)
	// A resource between r02 and r03 shifts every later part.
	f.apply(t, base.Add(time.Minute), event("r025"), body)
	check("after a creation", 3, 3)
	// The Source links r04 to a large description: same copy, no change
	// logged, but its entry no longer fits in a part with others.
	f.apply(t, base.Add(2*time.Minute), event("r04", resourcesync.Link{Rel: "describedby",
		Href: "http://origin.example.com/" + strings.Repeat("d", 2000)}), body)
	if st, _ := cat.Stats(ctx, "alpha"); st.Changes != 8 {
		t.Fatalf("the upstream-only update logged a change: %d changes, want 8", st.Changes)
	}
	check("after an upstream-only update", 4, 4)
}

// TestFromStateRefills checks that fromState, which refills a record field by
// field, leaves it as it makes a new one, whatever the record held
// before.
func TestFromStateRefills(t *testing.T) {
	n := int64(7)
	full := &catalog.ResourceState{Op: resourcesync.Updated, Resource: catalog.Resource{Collection: "alpha", URI: "http://h/a", Source: "s", Origin: "http://o/a",
		SHA256: "ab", MD5: "cd", Length: 3, Type: "text/plain", Changed: base, Seq: 9,
		Upstream: catalog.Upstream{Time: base.Add(-time.Hour), Modified: base.Add(-2 * time.Hour), Hash: resourcesync.Hashes{{Alg: "md5", Value: "cd"}},
			Length: &n, Type: "text/html", Links: []resourcesync.Link{{Rel: "via", Href: "http://o/a"}}}}}
	for _, rs := range []*catalog.ResourceState{
		{Resource: catalog.Resource{Collection: "beta", URI: "http://h/b"}},
		{Op: resourcesync.Deleted, Resource: catalog.Resource{URI: "http://h/c", Deleted: true}},
		full,
	} {
		var got Record
		fromState(&got, full)
		soil(&got.Upstream)
		fromState(&got, rs)
		var want Record
		fromState(&want, rs)
		if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
			t.Errorf("fromState(%s) over a used record = %+v\nwant %+v", rs.URI, got, want)
		}
	}
}

// soil sets the fields of an upstream change that no catalog row sets,
// so that a refill that leaves any of them shows.
func soil(u *viaduct.Change) {
	u.Listed, u.Doc, u.Blob = base, "doc", &viaduct.StoredBlob{SHA256: "ab"}
	u.Fresh, u.Repair = true, "ab"
}

// TestFromLoggedRefills checks that fromLogged, which refills a record
// field by field, gives what a record made anew from the change-log row
// holds, whatever the record held before.
func TestFromLoggedRefills(t *testing.T) {
	n := int64(7)
	full := &catalog.LoggedChange{Source: "s", UpstreamOp: resourcesync.Updated,
		ChangeRecord: catalog.ChangeRecord{Seq: 9, Collection: "alpha", URI: "http://h/a", Op: resourcesync.Created, At: base, Received: base,
			SHA256: "ab", MD5: "cd", Length: 3, Type: "text/plain"},
		Upstream: catalog.Upstream{Time: base.Add(-time.Hour), Modified: base.Add(-2 * time.Hour), Hash: resourcesync.Hashes{{Alg: "md5", Value: "cd"}},
			Length: &n, Type: "text/html", Links: []resourcesync.Link{{Rel: "via", Href: "http://o/a"}}}}
	for _, ch := range []*catalog.LoggedChange{
		{ChangeRecord: catalog.ChangeRecord{Collection: "beta", URI: "http://h/b", Op: resourcesync.Deleted}},
		full,
	} {
		var got Record
		fromLogged(&got, full)
		soil(&got.Upstream)
		fromLogged(&got, ch)
		want := Record{Collection: ch.Collection, URI: ch.URI, Op: ch.Op, Seq: ch.Seq, At: ch.At,
			SHA256: ch.SHA256, MD5: ch.MD5, Length: ch.Length, Type: ch.Type,
			Upstream: viaduct.Change{Source: ch.Source, Collection: ch.Collection, URI: ch.URI, Op: ch.UpstreamOp,
				Time: ch.Upstream.Time, Modified: ch.Upstream.Modified, Hash: ch.Upstream.Hash, Length: ch.Upstream.Length,
				Type: ch.Upstream.Type, Links: ch.Upstream.Links}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("fromLogged(%s) over a used record = %+v\nwant %+v", ch.URI, got, want)
		}
	}
}

// TestResourceListTagFollowsMetadata: a Source restating a resource's
// metadata changes its entry (the via link) without logging a change; the
// Resource List and the part holding it must not answer a conditional
// request with the old tag as unchanged.
func TestResourceListTagFollowsMetadata(t *testing.T) {
	f := newSQLiteFixture(t, Config{MaxEntries: 2, MaxBytes: 1 << 20})
	body := []byte("same body")
	event := func(name string, modified time.Time) *viaduct.Event {
		uri := "http://origin.example.com/" + name
		return &viaduct.Event{Source: "origin", Collection: "alpha", URI: uri, Op: resourcesync.Created, Type: "text/plain",
			Upstream: viaduct.Change{Source: "origin", Collection: "alpha", URI: uri, Op: resourcesync.Created, Modified: modified}}
	}
	for i := range 3 {
		f.apply(t, base.Add(time.Duration(i)*time.Second), event(fmt.Sprintf("r%d", i), base), body)
	}
	tags := func() (index, part string, partBody []byte) {
		t.Helper()
		resp, _ := f.get(t, "/alpha/resourcelist.xml")
		_, parts, _ := f.locs(t, "/alpha/resourcelist.xml")
		if len(parts) != 2 {
			t.Fatalf("%d parts, want 2", len(parts))
		}
		presp, pbody := f.get(t, strings.TrimPrefix(parts[0], f.srv.cfg.BaseURL))
		return resp.Header.Get("ETag"), presp.Header.Get("ETag"), pbody
	}
	index, part, before := tags()
	partPath := func() string {
		_, parts, _ := f.locs(t, "/alpha/resourcelist.xml")
		return strings.TrimPrefix(parts[0], f.srv.cfg.BaseURL)
	}
	if resp, _ := f.get(t, partPath(), "If-None-Match", part); resp.StatusCode != http.StatusNotModified {
		t.Fatalf("unchanged part with its own tag: %d, want 304", resp.StatusCode)
	}

	// r0 again, same bytes, a new modified time at the Source.
	f.apply(t, base.Add(time.Minute), event("r0", base.Add(time.Hour)), body)
	if st, _ := f.srv.cat.Stats(context.Background(), "alpha"); st.Changes != 3 {
		t.Fatalf("the metadata-only update logged a change: %d changes, want 3", st.Changes)
	}
	index2, part2, after := tags()
	if string(after) == string(before) {
		t.Fatal("the part did not change; the test shows nothing")
	}
	if index2 == index || part2 == part {
		t.Errorf("tags kept after the entry changed: index %s -> %s, part %s -> %s", index, index2, part, part2)
	}
	if resp, _ := f.get(t, partPath(), "If-None-Match", part); resp.StatusCode != http.StatusOK {
		t.Errorf("changed part with the old tag: %d, want 200", resp.StatusCode)
	}
}
