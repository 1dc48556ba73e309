package republish

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// TestInheritedLinksReachDestinations: a record of a repository as DSpace
// and Hyrax describe theirs (a bitstream with its metadata, the metadata
// format's profile, the OAI-PMH Set it belongs to) and of a Source with a
// Memento archive (spec examples 28 to 30), republished. A Destination
// reading the Resource List and the Change List gets, rel by rel, what
// docs/republish.md promises: profile, collection and the Memento links
// pointing at the origin, describedby at the aggregator's copy where it
// holds one, else at the origin's, and no mirror, patch or canonical link.
func TestInheritedLinksReachDestinations(t *testing.T) {
	f := newFixture(t, Config{Collections: []Collection{{Name: "gamma"}}})
	orig := time.Date(2024, 4, 1, 8, 0, 0, 0, time.UTC)
	f.add("gamma", "http://repo.example.edu/bitstreams/7/content", "created", base.Add(time.Minute), "%PDF-1.4", "application/pdf", viaduct.Change{
		Source: "repo", Modified: orig, Type: "application/pdf",
		Links: []resourcesync.Link{
			{Rel: "describedby", Href: "http://repo.example.edu/items/7/dc.xml", Type: "application/xml"},
			{Rel: "describedby", Href: "http://repo.example.edu/items/7/mets.xml", Type: "application/xml"},
			{Rel: "collection", Href: "http://repo.example.edu/oai?verb=ListRecords&set=col_1"},
			{Rel: "memento", Href: "http://archive.example.edu/20240401080000/http://repo.example.edu/bitstreams/7/content", Modified: orig},
			{Rel: "timegate", Href: "http://archive.example.edu/timegate/http://repo.example.edu/bitstreams/7/content"},
			{Rel: "timemap", Href: "http://archive.example.edu/timemap/http://repo.example.edu/bitstreams/7/content", Type: "application/link-format"},
			{Rel: "duplicate", Href: "http://mirror.example.edu/bitstreams/7/content", Pri: 1},
			{Rel: "http://www.openarchives.org/rs/terms/patch", Href: "http://repo.example.edu/bitstreams/7/patch"},
		}})
	f.add("gamma", "http://repo.example.edu/items/7/dc.xml", "created", base.Add(2*time.Minute), "<dc/>", "application/xml", viaduct.Change{
		Source: "repo", Modified: orig, Type: "application/xml",
		Links: []resourcesync.Link{
			{Rel: "describes", Href: "http://repo.example.edu/bitstreams/7/content"},
			{Rel: "profile", Href: "http://purl.org/dc/elements/1.1/"},
			{Rel: "original", Href: "http://repo.example.edu/items/7/dc.xml"},
			{Rel: "canonical", Href: "http://repo.example.edu/handle/123/7"},
		}})

	docs := map[string]string{"resourcelist-links.xml": "/gamma/resourcelist.xml", "changelist-links.xml": "/gamma/changelist/20240501T100000Z.xml"}
	for name, path := range docs {
		_, body := f.get(t, path)
		golden(t, name, body)
		validate(t, name, body)
		got := readLinks(t, body)
		want := map[string][]string{
			"http://mirror.example.org/gamma/r/http/repo.example.edu/bitstreams/7/content": {
				"via http://repo.example.edu/bitstreams/7/content",
				"describedby http://mirror.example.org/gamma/r/http/repo.example.edu/items/7/dc.xml",
				"describedby http://repo.example.edu/items/7/mets.xml",
				"collection http://repo.example.edu/oai?verb=ListRecords&set=col_1",
				"memento http://archive.example.edu/20240401080000/http://repo.example.edu/bitstreams/7/content",
				"timegate http://archive.example.edu/timegate/http://repo.example.edu/bitstreams/7/content",
				"timemap http://archive.example.edu/timemap/http://repo.example.edu/bitstreams/7/content",
			},
			"http://mirror.example.org/gamma/r/http/repo.example.edu/items/7/dc.xml": {
				"via http://repo.example.edu/items/7/dc.xml",
				"describes http://mirror.example.org/gamma/r/http/repo.example.edu/bitstreams/7/content",
				"profile http://purl.org/dc/elements/1.1/",
				"original http://repo.example.edu/items/7/dc.xml",
			},
		}
		for loc, links := range want {
			if g := strings.Join(got[loc], "\n"); g != strings.Join(links, "\n") {
				t.Errorf("%s: %s has links\n%s\nwant\n%s", name, loc, g, strings.Join(links, "\n"))
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d entries, want %d", name, len(got), len(want))
		}
	}
}

// readLinks reads a document as a Destination does and returns each
// entry's links, "rel href", by loc.
func readLinks(t *testing.T, doc []byte) map[string][]string {
	t.Helper()
	rd, err := resourcesync.NewReader(bytes.NewReader(doc), resourcesync.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for {
		e, err := rd.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range e.Links {
			out[e.Loc] = append(out[e.Loc], l.Rel+" "+l.Href)
		}
	}
}
