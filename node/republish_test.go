package node

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/sim"
)

// TestRepublishedDocumentsValidate harvests a Source that changes over
// several Change List periods into a node whose Resource List must be an
// index, and checks that every document the node serves passes the
// validator with no error: Source Description, Capability List, Resource
// List Index and each part, Change List Index and each Change List.
func TestRepublishedDocumentsValidate(t *testing.T) {
	src := startSource(t, sim.Config{Resources: 120, Seed: 11, MinSize: 16, MaxSize: 512})
	cfg := testConfig(t.TempDir(), sourceConfig("s", src))
	cfg.Republish.MaxEntries = 25
	cfg.Republish.ChangeListPeriod = time.Second
	n := startNode(t, cfg, nil)

	mustSync(t, n, "s")
	waitSettled(t, n, 30*time.Second)
	nextPeriod(t, time.Second)
	src.Create(20)
	src.Update(30)
	src.Delete(15)
	mustSync(t, n, "s")
	waitSettled(t, n, 30*time.Second)

	got := validateServed(t, n.URL())
	t.Logf("validated %v", got)
	if got["resourcelist-part"] < 5 {
		t.Errorf("Resource List of %d resources with max_entries 25 served %d parts, want at least 5", src.Len(), got["resourcelist-part"])
	}
	if got["resourcelist-index"] != 1 {
		t.Errorf("served %d Resource List Indexes, want 1", got["resourcelist-index"])
	}
	if got["changelist"] < 2 {
		t.Errorf("changes over two periods gave %d Change Lists, want at least 2", got["changelist"])
	}
}

// nextPeriod waits until the clock is in the period (aligned on the Unix
// epoch, as the republisher aligns Change Lists) after the current one.
func nextPeriod(t testing.TB, period time.Duration) {
	t.Helper()
	start := time.Now().Truncate(period)
	waitFor(t, 2*period+time.Second, "the next Change List period", func() bool {
		return time.Now().Truncate(period).After(start)
	})
}

// validateServed walks the Source served at base from its Source
// Description down to every list, validates each document and fails the
// test on any error. It returns how many documents of each kind it read.
func validateServed(t testing.TB, base string) map[string]int {
	t.Helper()
	kinds := map[string]int{}
	desc := base + "/.well-known/resourcesync"
	h, caps := validDoc(t, desc, "", resourcesync.CapDescription)
	kinds["description"]++
	if h.Root != resourcesync.URLSet || len(caps) == 0 {
		t.Fatalf("%s lists no Capability List", desc)
	}
	for _, c := range caps {
		_, docs := validDoc(t, c.Loc, desc, resourcesync.CapCapabilityList)
		kinds["capabilitylist"]++
		for _, d := range docs {
			switch d.MD.Capability {
			case resourcesync.CapResourceList:
				validList(t, kinds, d.Loc, c.Loc, resourcesync.CapResourceList, "resourcelist", "resourcelist-part")
			case resourcesync.CapChangeList:
				validList(t, kinds, d.Loc, c.Loc, resourcesync.CapChangeList, "changelist", "changelist")
			case resourcesync.CapResourceDump, resourcesync.CapChangeDump:
				// The dump documents are lists of packages; the packages
				// themselves are checked by the dump tests.
				validDoc(t, d.Loc, c.Loc, d.MD.Capability)
				kinds[d.MD.Capability]++
			case resourcesync.CapChangeNotification:
				// A WebSub topic, not a document.
				kinds[d.MD.Capability]++
			default:
				t.Errorf("%s lists %s with capability %q, which this test does not know", c.Loc, d.Loc, d.MD.Capability)
			}
		}
	}
	return kinds
}

// validList validates the list of capability capl at loc, listed in the
// Capability List up. A single list counts as kinds[kind]; an index counts
// as kinds[kind+"-index"] and each of its lists, validated too, as
// kinds[part].
func validList(t testing.TB, kinds map[string]int, loc, up, capl, kind, part string) {
	t.Helper()
	hd, parts := validDoc(t, loc, up, capl)
	if hd.Root != resourcesync.SitemapIndex {
		kinds[kind]++
		return
	}
	kinds[kind+"-index"]++
	for _, p := range parts {
		validDoc(t, p.Loc, up, capl)
		kinds[part]++
	}
}

// validDoc fetches a document, validates it as viaduct validate does (up
// is the document that led to it), fails the test on any error or on a
// capability other than want, and returns its header and entries.
func validDoc(t testing.TB, uri, up, want string) (*resourcesync.Header, []resourcesync.Entry) {
	t.Helper()
	body := getBody(t, uri)
	rep, err := resourcesync.Validate(bytes.NewReader(body), resourcesync.DefaultLimits(), resourcesync.Options{Up: up})
	if err != nil {
		t.Fatalf("validating %s: %v", uri, err)
	}
	if !rep.OK(false) {
		var msgs []string
		for _, p := range rep.Problems {
			if p.Severity == resourcesync.SeverityError {
				msgs = append(msgs, p.String())
			}
		}
		t.Errorf("%s has %d errors:\n%s", uri, rep.Errors, strings.Join(msgs, "\n"))
	}
	h, entries := parseDoc(t, uri, body)
	if h.MD.Capability != want {
		t.Errorf("%s has capability %q, want %q", uri, h.MD.Capability, want)
	}
	return h, entries
}

// getBody GETs uri and fails the test unless it answers 200.
func getBody(t testing.TB, uri string) []byte {
	t.Helper()
	resp, err := http.Get(uri)
	if err != nil {
		t.Fatalf("GET %s: %v", uri, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", uri, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", uri, resp.Status, body)
	}
	return body
}

// fetchDoc GETs and reads a ResourceSync document.
func fetchDoc(t testing.TB, uri string) (*resourcesync.Header, []resourcesync.Entry) {
	t.Helper()
	return parseDoc(t, uri, getBody(t, uri))
}

// parseDoc reads every entry of a document, keeping copies that outlive
// the reader.
func parseDoc(t testing.TB, uri string, body []byte) (*resourcesync.Header, []resourcesync.Entry) {
	t.Helper()
	rd, err := resourcesync.NewReader(bytes.NewReader(body), resourcesync.DefaultLimits())
	if err != nil {
		t.Fatalf("reading %s: %v", uri, err)
	}
	var out []resourcesync.Entry
	for {
		e, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("reading %s: %v", uri, err)
		}
		out = append(out, cloneEntry(e))
	}
	return rd.Header(), out
}

// cloneEntry is a deep enough copy of e that the reader may reuse e.
func cloneEntry(e *resourcesync.Entry) resourcesync.Entry {
	c := *e
	c.MD = &resourcesync.MD{}
	if e.MD != nil {
		*c.MD = *e.MD
		c.MD.Hash = slices.Clone(e.MD.Hash)
	}
	c.Links = make([]resourcesync.Link, len(e.Links))
	for i, l := range e.Links {
		l.Hash = slices.Clone(l.Hash)
		c.Links[i] = l
	}
	return c
}

// resourceList reads a Resource List, or every part of a Resource List
// Index, and returns its header (the index's, when there is one) and the
// entries of every part.
func resourceList(t testing.TB, uri string) (*resourcesync.Header, []resourcesync.Entry) {
	t.Helper()
	h, entries := fetchDoc(t, uri)
	if h.Root != resourcesync.SitemapIndex {
		return h, entries
	}
	var all []resourcesync.Entry
	for _, p := range entries {
		_, es := fetchDoc(t, p.Loc)
		all = append(all, es...)
	}
	return h, all
}

// changeLists reads a Change List Index and returns each Change List it
// lists, in order, with its header.
func changeLists(t testing.TB, uri string) []servedList {
	t.Helper()
	h, entries := fetchDoc(t, uri)
	if h.Root != resourcesync.SitemapIndex {
		return []servedList{{URI: uri, Header: h, Entries: entries}}
	}
	var out []servedList
	for _, l := range entries {
		lh, es := fetchDoc(t, l.Loc)
		out = append(out, servedList{URI: l.Loc, Header: lh, Entries: es})
	}
	return out
}

// servedList is one Change List as read.
type servedList struct {
	URI     string
	Header  *resourcesync.Header
	Entries []resourcesync.Entry
}
