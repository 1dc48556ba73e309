package node

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/harvester"
	"github.com/viaduct-mirror/viaduct/provenance"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/sim"
)

// TestChain runs a simulated Source, a node A harvesting it and a node B
// harvesting A, and checks after A and B have caught up, and again after
// creations, updates and deletions at the Source, that B is a faithful
// copy of the origin: its entries point at the origin with the origin's
// facts, its times are its own, its provenance runs origin -> A -> B, the
// bytes it holds and serves are the origin's, and every document A and B
// serve is valid.
//
// The origin writes each time form in turn; B follows A through A's Source
// Description in one and A's Capability List in the other, and A's
// Resource List is an index in the second. A node C follows B, and is
// checked against B as B is against A.
func TestChain(t *testing.T) {
	t.Run("1.1", func(t *testing.T) { testChain(t, sim.Form11, "/.well-known/resourcesync", 0) })
	t.Run("1.0", func(t *testing.T) { testChain(t, sim.Form10, "/s/capabilitylist.xml", 30) })
}

func testChain(t *testing.T, form, path string, maxEntries int) {
	src := startSource(t, sim.Config{Resources: 100, Seed: 5, MinSize: 16, MaxSize: 1024, TimeForm: form})
	acfg := testConfig(t.TempDir(), sourceConfig("s", src))
	acfg.Republish.ChangeListPeriod = time.Second
	acfg.Republish.MaxEntries = maxEntries
	a := startNode(t, acfg, nil)
	up := nodeSource("a", a)
	up.URL = a.URL() + path
	bcfg := testConfig(t.TempDir(), up)
	bcfg.Republish.ChangeListPeriod = time.Second
	b := startNode(t, bcfg, nil)
	// C follows B: a third hop, whose entries must still point at the
	// origin, and whose provenance shows the origin and B (A is not
	// visible in B's documents).
	ccfg := testConfig(t.TempDir(), nodeSource("b", b))
	ccfg.Republish.ChangeListPeriod = time.Second
	c := startNode(t, ccfg, nil)
	ab := chain{src: src, a: a, b: b, aColl: "s", bColl: "a", period: time.Second}
	bc := chain{src: src, a: b, b: c, aColl: "a", bColl: "b", period: time.Second}
	round := func() {
		t.Helper()
		ab.catchUp(t)
		syncSettle(t, c, "b")
		checkMirror(t, a, "s", src)
		ab.check(t)
		bc.check(t)
	}

	round()
	nextPeriod(t, time.Second)
	src.Create(15)
	src.Update(20)
	src.Delete(10)
	src.Mutate(5)
	round()
	for _, n := range []*Node{a, b, c} {
		validateServed(t, n.URL())
		if dl := deadLetters(t, n); len(dl) != 0 {
			t.Fatalf("%s has %d dead letters, first: %s %v", n.URL(), len(dl), dl[0].Reason, dl[0].Evidence)
		}
	}
}

// nodeSource is another node's republished Source, found from its Source
// Description, polled only when a test asks.
func nodeSource(name string, up *Node) harvester.SourceConfig {
	yes := true
	return harvester.SourceConfig{Name: name, URL: up.URL() + "/.well-known/resourcesync", Schedule: "@every 1h", AllowLoopback: &yes}
}

// chain is a Source, a node a holding it in collection aColl and a node
// b harvesting a into bColl; each collection is named for the Source it
// is harvested from.
type chain struct {
	src          *sim.Server
	a, b         *Node
	aColl, bColl string
	// period is B's Change List period.
	period time.Duration
}

// catchUp makes A and then B harvest and settle.
func (c chain) catchUp(t testing.TB) {
	t.Helper()
	syncSettle(t, c.a, c.aColl)
	syncSettle(t, c.b, c.bColl)
}

// check compares what B serves and holds with the origin and with A.
func (c chain) check(t *testing.T) {
	t.Helper()
	origin := originFacts(t, c.src)
	aList := c.served(t, c.a, c.aColl)
	bList := c.served(t, c.b, c.bColl)

	live := 0
	for uri, it := range c.src.Snapshot() {
		be, inB := bList.entries[uri]
		if it.Deleted {
			if inB {
				t.Errorf("B lists %s, which the origin deleted", uri)
			}
			continue
		}
		live++
		oe, ae := origin.entries[uri], aList.entries[uri]
		if oe == nil || ae == nil || !inB {
			t.Fatalf("%s: at the origin %v, listed by A %v, by B %v", uri, oe != nil, ae != nil, inB)
		}
		checkChainEntry(t, c, origin, uri, it, oe, ae, be)
	}
	if len(bList.entries) != live {
		t.Errorf("B lists %d resources, the origin has %d", len(bList.entries), live)
	}
	// B's at is its own: not earlier than A's, nor than any change of
	// B's own that its list reflects.
	bAt := bList.header.MD.At
	if bAt.Before(aList.header.MD.At) {
		t.Errorf("B's Resource List at %v, A's %v: B's must be its own and not earlier", bAt, aList.header.MD.At)
	}
	for _, be := range bList.entries {
		if bAt.Before(be.LastMod) {
			t.Errorf("B's Resource List at %v is before its entry %s's lastmod %v: B's at must be its own time", bAt, be.Loc, be.LastMod)
		}
	}
	c.checkChangeLists(t, origin)
	c.checkProvenance(t, origin, aList, bList)
	checkBytes(t, c.b, c.bColl, c.src)
}

// checkChainEntry checks B's Resource List entry for the origin resource
// uri: B's URI and copy, one via link to the origin with the origin's
// facts, and B's own change time.
func checkChainEntry(t *testing.T, c chain, origin facts, uri string, it sim.Item, oe, ae, be *resourcesync.Entry) {
	t.Helper()
	if !strings.HasPrefix(be.Loc, c.b.URL()+"/"+c.bColl+"/r/") {
		t.Errorf("B lists %s as %s, not under its own URL", uri, be.Loc)
	}
	if be.MD.Hash.Get(resourcesync.SHA256) != it.SHA256 || be.MD.Length == nil || *be.MD.Length != it.Length {
		t.Errorf("B lists %s with %s length %v, origin has sha-256 %s length %d", uri, be.MD.Hash, be.MD.Length, it.SHA256, it.Length)
	}
	var vias []resourcesync.Link
	for _, l := range be.Links {
		if l.Rel == "via" {
			vias = append(vias, l)
		}
	}
	if len(vias) != 1 {
		t.Fatalf("B's entry %s has %d via links, want 1: %+v", be.Loc, len(vias), be.Links)
	}
	v := vias[0]
	switch {
	case v.Href != uri:
		t.Errorf("B's via link of %s points at %s, not the origin", be.Loc, v.Href)
	case !v.Modified.Equal(oe.LastMod):
		t.Errorf("B's via link of %s says modified %v, the origin says %v", be.Loc, v.Modified, oe.LastMod)
	case !sameHashes(v.Hash, oe.MD.Hash):
		t.Errorf("B's via link of %s says hash %s, the origin says %s", be.Loc, v.Hash, oe.MD.Hash)
	case v.Length == nil || *v.Length != *oe.MD.Length:
		t.Errorf("B's via link of %s says length %v, the origin says %d", be.Loc, v.Length, *oe.MD.Length)
	}
	if body := getBody(t, be.Loc); int64(len(body)) != it.Length || hexSHA256(body) != it.SHA256 {
		t.Errorf("B serves %s as %d bytes hashing to %s, the origin says %d, %s", be.Loc, len(body), hexSHA256(body), it.Length, it.SHA256)
	}
	// B copied the origin's version after the origin made it: B's own
	// time is strictly later than the origin's. (Comparing B's times
	// with the set of every time the origin wrote, as this once did,
	// fails when B's clock and the origin's, read independently, land on
	// the same microsecond, which a busy machine makes likely enough.)
	if be.LastMod.Before(ae.LastMod) || !be.LastMod.After(oe.LastMod) {
		t.Errorf("B's lastmod of %s is %v, A's %v, the origin's %v: B's must be its own, later than the origin's and not earlier than A's", uri, be.LastMod, ae.LastMod, oe.LastMod)
	}
}

// facts is what the origin itself publishes: its Resource List entries by
// URI and when it deleted each URI it deleted (the simulated Source never
// reuses a URI), to tell the nodes' change times from the origin's.
type facts struct {
	entries map[string]*resourcesync.Entry
	deleted map[string]time.Time
}

func originFacts(t testing.TB, src *sim.Server) facts {
	t.Helper()
	f := facts{entries: map[string]*resourcesync.Entry{}, deleted: map[string]time.Time{}}
	_, entries := resourceList(t, src.URL+sim.PathResourceList)
	for i := range entries {
		e := &entries[i]
		f.entries[e.Loc] = e
	}
	for _, ch := range src.ChangesSince(time.Time{}) {
		if ch.Op == resourcesync.Deleted {
			f.deleted[ch.URI] = ch.Time
		}
	}
	return f
}

// copiedAt is the origin's time of the change a node's change entry e
// reflects: the deletion of its URI, or the modification its via link
// names.
func (f facts) copiedAt(e *resourcesync.Entry) (time.Time, bool) {
	via := e.Link("via")
	if via == nil {
		return time.Time{}, false
	}
	if e.MD.Change == resourcesync.Deleted {
		t, ok := f.deleted[via.Href]
		return t, ok
	}
	return via.Modified, !via.Modified.IsZero()
}

// list is a node's Resource List with its entries by origin URI.
type list struct {
	header  *resourcesync.Header
	entries map[string]*resourcesync.Entry
}

func (c chain) served(t testing.TB, n *Node, coll string) list {
	t.Helper()
	h, entries := resourceList(t, n.URL()+"/"+coll+"/resourcelist.xml")
	l := list{header: h, entries: map[string]*resourcesync.Entry{}}
	for i := range entries {
		e := &entries[i]
		via := e.Link("via")
		if via == nil {
			t.Fatalf("%s lists %s without a via link", n.URL(), e.Loc)
		}
		if _, dup := l.entries[via.Href]; dup {
			t.Errorf("%s lists origin %s twice", n.URL(), via.Href)
		}
		l.entries[via.Href] = e
	}
	return l
}

// checkChangeLists checks B's Change Lists: their intervals are B's
// periods and begin no earlier than A's, their change times are B's, not
// the origin's; every change points at the origin; the last change B
// lists for each origin URI is no earlier than A's and agrees with the
// origin's state.
func (c chain) checkChangeLists(t *testing.T, origin facts) {
	t.Helper()
	aLists := changeLists(t, c.a.URL()+"/"+c.aColl+"/changelist.xml")
	bLists := changeLists(t, c.b.URL()+"/"+c.bColl+"/changelist.xml")
	if len(bLists) == 0 || len(aLists) == 0 {
		t.Fatalf("A serves %d Change Lists, B %d", len(aLists), len(bLists))
	}
	if bLists[0].Header.MD.From.Before(aLists[0].Header.MD.From) {
		t.Errorf("B's first Change List is from %v, before A's %v", bLists[0].Header.MD.From, aLists[0].Header.MD.From)
	}
	aLast, bLast := lastChanges(aLists), lastChanges(bLists)
	for i, l := range bLists {
		md := l.Header.MD
		// B's intervals are periods of B's own grid, consecutive, and
		// hold B's change times. (The origin writes some times in whole
		// seconds, so a period boundary may coincide with one of them.)
		if !md.From.Equal(md.From.Truncate(c.period)) || (!md.Until.IsZero() && !md.Until.Equal(md.From.Add(c.period))) {
			t.Errorf("B's Change List %s covers [%v, %v), not one of its periods of %v", l.URI, md.From, md.Until, c.period)
		}
		if i > 0 && !md.From.Equal(bLists[i-1].Header.MD.Until) {
			t.Errorf("B's Change List %s is from %v, the one before it until %v", l.URI, md.From, bLists[i-1].Header.MD.Until)
		}
		for _, e := range l.Entries {
			// A node's change happens after the origin's change it
			// copies: strictly later, so that an origin time reused
			// as B's is caught, whatever times the clocks happen to
			// read.
			if o, ok := origin.copiedAt(&e); !ok || !e.MD.DateTime.After(o) {
				t.Errorf("B's Change List %s has a change of %s at %v, the origin's change it copies at %v (known %v): B's time must be its own", l.URI, e.Loc, e.MD.DateTime, o, ok)
			}
			if e.MD.DateTime.Before(md.From) || (!md.Until.IsZero() && !e.MD.DateTime.Before(md.Until)) {
				t.Errorf("B's Change List %s covers [%v, %v) and lists a change at %v", l.URI, md.From, md.Until, e.MD.DateTime)
			}
			if v := e.Link("via"); v == nil || !strings.HasPrefix(v.Href, c.src.URL+"/") {
				t.Errorf("B's change of %s does not point at the origin: %+v", e.Loc, e.Links)
			}
		}
	}
	snap := c.src.Snapshot()
	for uri, be := range bLast {
		ae := aLast[uri]
		if ae == nil {
			t.Errorf("B lists a change of %s, A none", uri)
			continue
		}
		if be.MD.DateTime.Before(ae.MD.DateTime) {
			t.Errorf("B's last change of %s is at %v, before A's at %v", uri, be.MD.DateTime, ae.MD.DateTime)
		}
		if deleted := be.MD.Change == resourcesync.Deleted; deleted != snap[uri].Deleted {
			t.Errorf("B's last change of %s is %s, the origin has deleted=%v", uri, be.MD.Change, snap[uri].Deleted)
		}
	}
}

// lastChanges is the last change listed for each origin URI.
func lastChanges(lists []servedList) map[string]*resourcesync.Entry {
	out := map[string]*resourcesync.Entry{}
	for _, l := range lists {
		for i := range l.Entries {
			e := &l.Entries[i]
			if v := e.Link("via"); v != nil {
				out[v.Href] = e
			}
		}
	}
	return out
}

// checkProvenance asks B for the provenance of every origin URI it lists
// and checks the chain origin -> A -> B with each hop's own facts.
func (c chain) checkProvenance(t *testing.T, origin facts, aList, bList list) {
	t.Helper()
	for uri, be := range bList.entries {
		var reply struct {
			Resources []struct {
				URI  string           `json:"uri"`
				Hops []provenance.Hop `json:"hops"`
			} `json:"resources"`
		}
		body := getBody(t, c.b.URL()+"/provenance?uri="+url.QueryEscape(uri))
		if err := json.Unmarshal(body, &reply); err != nil {
			t.Fatalf("provenance of %s: %v: %s", uri, err, body)
		}
		if len(reply.Resources) != 1 || len(reply.Resources[0].Hops) != 3 {
			t.Fatalf("B's provenance of %s is not one chain of three hops: %s", uri, body)
		}
		hops := reply.Resources[0].Hops
		ae, oe := aList.entries[uri], origin.entries[uri]
		want := []struct {
			role, uri string
			modified  time.Time
			hash      resourcesync.Hashes
		}{
			{provenance.RoleOrigin, uri, oe.LastMod, oe.MD.Hash},
			{provenance.RoleAggregator, ae.Loc, ae.LastMod, ae.MD.Hash},
			{provenance.RoleSelf, be.Loc, be.LastMod, be.MD.Hash},
		}
		for i, w := range want {
			h := hops[i]
			if h.Role != w.role || h.URI != w.uri || !h.Modified.Equal(w.modified) || !sameHashes(h.Hash, w.hash) {
				t.Errorf("B's provenance of %s, hop %d: %s %s %v %s; want %s %s %v %s", uri, i, h.Role, h.URI, h.Modified, h.Hash, w.role, w.uri, w.modified, w.hash)
			}
		}
	}
}

// checkBytes walks n's catalog and hashes every blob it holds for coll,
// comparing it with what the origin says of the resource.
func checkBytes(t testing.TB, n *Node, coll string, src *sim.Server) {
	t.Helper()
	ctx := context.Background()
	snap := src.Snapshot()
	held := 0
	err := n.Catalog().Resources(ctx, coll, "", 0, func(r *catalog.Resource) error {
		if r.Deleted {
			return nil
		}
		held++
		it, ok := snap[r.Origin]
		if !ok || it.Deleted {
			return errors.New("holds " + r.URI + " (origin " + r.Origin + "), which the origin does not have")
		}
		blob, err := n.Blobs().Open(ctx, r.SHA256)
		if err != nil {
			return err
		}
		defer blob.Close()
		h := sha256.New()
		size, err := io.Copy(h, blob)
		if err != nil {
			return err
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != it.SHA256 || size != it.Length {
			t.Errorf("%s: the bytes held hash to %s (%d bytes), the origin says %s (%d)", r.Origin, got, size, it.SHA256, it.Length)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walking %s: %v", coll, err)
	}
	if held != src.Len() {
		t.Errorf("%s holds %d resources, the origin %d", coll, held, src.Len())
	}
}

// sameHashes reports whether a and b state the same digests, in any order.
func sameHashes(a, b resourcesync.Hashes) bool {
	if len(a) != len(b) || len(a) == 0 {
		return false
	}
	for _, h := range a {
		if b.Get(h.Alg) != h.Value {
			return false
		}
	}
	return true
}

func hexSHA256(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestChainOddURIs carries resources whose origin URIs have escaped
// spaces, query strings, non-ASCII bytes, an escaped slash and a trailing
// slash through A (whose Resource List is an index, so the URIs also
// bound its parts) to B, and checks that B holds and serves each with the
// origin's bytes and points back at the origin URI exactly as written.
func TestChainOddURIs(t *testing.T) {
	paths := []string{"/a%20b.pdf", "/doc?x=1&y=2", "/%C3%BCber.txt", "/p%2Fq", "/dir/", "/plus+sign;v=1", "/doc?x=1&y=3"}
	src := startStaticSource(t, paths)
	yes := true
	acfg := testConfig(t.TempDir(), harvester.SourceConfig{Name: "s", URL: src.url, Schedule: "@every 1h", AllowLoopback: &yes})
	acfg.Republish.MaxEntries = 2
	a := startNode(t, acfg, nil)
	b := startNode(t, testConfig(t.TempDir(), nodeSource("a", a)), nil)
	syncSettle(t, a, "s")
	syncSettle(t, b, "a")

	_, entries := resourceList(t, b.URL()+"/a/resourcelist.xml")
	if len(entries) != len(paths) {
		t.Errorf("B lists %d resources, the origin %d", len(entries), len(paths))
	}
	for _, e := range entries {
		via := e.Link("via")
		if via == nil {
			t.Fatalf("B lists %s without a via link", e.Loc)
		}
		body, ok := src.bodies[via.Href]
		if !ok {
			t.Errorf("B's via link of %s points at %s, which the origin does not have", e.Loc, via.Href)
			continue
		}
		if got := getBody(t, e.Loc); string(got) != body {
			t.Errorf("B serves %s (origin %s) as %q, the origin has %q", e.Loc, via.Href, got, body)
		}
		if via.Hash.Get(resourcesync.SHA256) != hexSHA256([]byte(body)) {
			t.Errorf("B's via link of %s says %s", e.Loc, via.Hash)
		}
	}
	for uri := range src.bodies {
		r, err := b.Catalog().ResourceByOrigin(context.Background(), "a", uri)
		if err != nil || r.Deleted {
			t.Errorf("B does not hold %s: %v", uri, err)
		}
	}
	validateServed(t, a.URL())
	validateServed(t, b.URL())
}

// staticSource is an origin whose resources have the given paths and
// never change: a Source Description, a Capability List, a Resource List
// and the bitstreams.
type staticSource struct {
	url    string
	bodies map[string]string // by URI
}

func startStaticSource(t testing.TB, paths []string) *staticSource {
	t.Helper()
	s := &staticSource{bodies: map[string]string{}}
	byPath := map[string]string{}
	modified := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s.url = srv.URL + "/.well-known/resourcesync"
	for i, p := range paths {
		byPath[p] = fmt.Sprintf("resource %d at %s\n", i, p)
		s.bodies[srv.URL+p] = byPath[p]
	}
	doc := func(w http.ResponseWriter, h *resourcesync.Header, entries ...resourcesync.Entry) {
		w.Header().Set("Content-Type", "application/xml")
		wr, err := resourcesync.NewWriter(w, h)
		if err != nil {
			t.Error(err)
			return
		}
		for i := range entries {
			if err := wr.Write(&entries[i]); err != nil {
				t.Error(err)
				return
			}
		}
		if err := wr.Close(); err != nil {
			t.Error(err)
		}
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.RequestURI() {
		case "/.well-known/resourcesync":
			doc(w, &resourcesync.Header{MD: resourcesync.MD{Capability: resourcesync.CapDescription}},
				resourcesync.Entry{Loc: srv.URL + "/capabilitylist.xml", MD: &resourcesync.MD{Capability: resourcesync.CapCapabilityList}})
		case "/capabilitylist.xml":
			doc(w, &resourcesync.Header{MD: resourcesync.MD{Capability: resourcesync.CapCapabilityList},
				Links: []resourcesync.Link{{Rel: "up", Href: srv.URL + "/.well-known/resourcesync"}}},
				resourcesync.Entry{Loc: srv.URL + "/resourcelist.xml", MD: &resourcesync.MD{Capability: resourcesync.CapResourceList}})
		case "/resourcelist.xml":
			var entries []resourcesync.Entry
			for _, p := range paths {
				n := int64(len(byPath[p]))
				entries = append(entries, resourcesync.Entry{Loc: srv.URL + p, LastMod: modified, MD: &resourcesync.MD{
					Hash: resourcesync.Hashes{{Alg: resourcesync.SHA256, Value: hexSHA256([]byte(byPath[p]))}}, Length: &n, Type: "text/plain"}})
			}
			doc(w, &resourcesync.Header{MD: resourcesync.MD{Capability: resourcesync.CapResourceList, At: modified.Add(time.Hour)},
				Links: []resourcesync.Link{{Rel: "up", Href: srv.URL + "/capabilitylist.xml"}}}, entries...)
		default:
			body, ok := byPath[r.URL.RequestURI()]
			if !ok {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, body)
		}
	})
	return s
}
