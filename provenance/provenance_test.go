package provenance

import (
	"context"
	"encoding/xml"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

func i64(n int64) *int64 { return &n }

var (
	t0     = time.Date(2013, 1, 3, 7, 0, 0, 0, time.UTC)
	md5sum = resourcesync.Hashes{{Alg: "md5", Value: "1584abdf8ebdc9802ac0c6a7402c03b6"}}
)

// originChange is what an original Source said (spec example 31).
func originChange(links ...resourcesync.Link) *viaduct.Change {
	return &viaduct.Change{
		Source: "orig", URI: "http://original.example.com/res1.html", Op: "updated",
		Time: t0, Modified: t0, Hash: md5sum, Length: i64(8876), Type: "text/html", Links: links,
	}
}

func TestActionForEachRel(t *testing.T) {
	want := map[string]Action{
		"via": Keep, "VIA": Keep, "profile": Keep, "collection": Keep,
		"memento": Keep, "timegate": Keep, "timemap": Keep, "original": Keep,
		"canonical": Drop, "duplicate": Drop, PatchRel: Drop, "patch": Drop,
		"describedby": RewriteOrKeep, "describes": RewriteOrKeep, "alternate": Rewrite, "Alternate": Rewrite,
		"license": Unknown, "http://example.com/rel/x": Unknown, "": Unknown,
	}
	for rel, a := range want {
		if got := ActionFor(rel); got != a {
			t.Errorf("ActionFor(%q) = %v, want %v", rel, got, a)
		}
	}
	if Unknown != Drop {
		t.Errorf("unknown rels: %v, documented as drop", Unknown)
	}
	if len(Rules()) != 14 {
		t.Errorf("Rules() has %d rows, want 14", len(Rules()))
	}
}

func TestViaFromOrigin(t *testing.T) {
	links, err := Links(context.Background(), originChange(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(links) != 1 {
		t.Fatalf("links = %+v, want exactly one via", links)
	}
	v := links[0]
	if v.Rel != "via" || v.Href != "http://original.example.com/res1.html" || !v.Modified.Equal(t0) ||
		v.Hash.String() != md5sum.String() || v.Length == nil || *v.Length != 8876 || v.Type != "text/html" {
		t.Errorf("via = %+v", v)
	}
}

func TestViaChainKept(t *testing.T) {
	// The upstream is aggregator 1 (spec example 32): its via is kept as is.
	via := resourcesync.Link{Rel: "via", Href: "http://original.example.com/res1.html", Modified: t0, Hash: md5sum, Length: i64(8876), Type: "text/html", Pri: 3}
	up := &viaduct.Change{
		Source: "agg1", URI: "http://aggregator1.example.com/res1.html", Op: "updated",
		Time: t0.Add(13 * time.Hour), Hash: md5sum, Length: i64(8876), Type: "text/html",
		Links: []resourcesync.Link{{Rel: "canonical", Href: "http://x/"}, via},
	}
	links, err := Links(context.Background(), up, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(links) != 1 {
		t.Fatalf("links = %+v, want one via", links)
	}
	got := links[0]
	if got.Href != via.Href || !got.Modified.Equal(via.Modified) || got.Pri != 3 || got.Hash.String() != via.Hash.String() {
		t.Errorf("via = %+v, want the upstream's %+v", got, via)
	}
	hops := Hops(up, Hop{URI: "http://aggregator2.example.com/res1.html"})
	if len(hops) != 3 || hops[0].Role != RoleOrigin || hops[0].URI != via.Href ||
		hops[1].Role != RoleAggregator || hops[1].URI != up.URI || hops[1].Source != "agg1" ||
		hops[2].Role != RoleSelf || hops[2].URI != "http://aggregator2.example.com/res1.html" {
		t.Errorf("hops = %+v", hops)
	}
	if OriginURI(up) != via.Href {
		t.Errorf("OriginURI = %s", OriginURI(up))
	}
}

func TestHopsDirect(t *testing.T) {
	hops := Hops(originChange(), Hop{URI: "http://agg/r"})
	if len(hops) != 2 || hops[0].Role != RoleOrigin || hops[0].URI != "http://original.example.com/res1.html" ||
		hops[1].Role != RoleSelf {
		t.Errorf("hops = %+v", hops)
	}
}

// TestInheritedLinks: what a Destination reads of an origin's links on
// the aggregator's entry, rel by rel (docs/republish.md).
func TestInheritedLinks(t *testing.T) {
	up := originChange(
		resourcesync.Link{Rel: "collection", Href: "http://original.example.com/aggregation/0601007"},
		resourcesync.Link{Rel: "canonical", Href: "http://original.example.com/c"},
		resourcesync.Link{Rel: "duplicate", Href: "http://mirror.example.com/res1.html", Pri: 1},
		resourcesync.Link{Rel: "memento", Href: "http://original.example.com/20130103070000/res1", Modified: t0, Hash: md5sum, Length: i64(8876), Type: "text/html"},
		resourcesync.Link{Rel: "timegate", Href: "http://original.example.com/timegate/res1"},
		resourcesync.Link{Rel: "timemap", Href: "http://original.example.com/timemap/res1", Type: "application/link-format"},
		resourcesync.Link{Rel: "original", Href: "http://original.example.com/res1.html"},
		resourcesync.Link{Rel: PatchRel, Href: "http://a/p"},
		resourcesync.Link{Rel: "describedby", Href: "http://original.example.com/meta.xml", Type: "application/xml", Hash: md5sum},
		resourcesync.Link{Rel: "describedby", Href: "http://original.example.com/dc.xml", Type: "application/xml",
			Hash:  resourcesync.Hashes{{Alg: "md5", Value: "1584abdf8ebdc9802ac0c6a7402c03b6"}, {Alg: "x-tiger", Value: "ab"}},
			Extra: []xml.Attr{{Name: xml.Name{Space: "http://x/", Local: "y"}, Value: "z"}}},
		resourcesync.Link{Rel: "describes", Href: "http://original.example.com/missing"},
		resourcesync.Link{Rel: "profile", Href: "http://purl.org/dc/elements/1.1/"},
		resourcesync.Link{Rel: "alternate", Href: "http://original.example.com/res1.pdf", Type: "application/pdf", Pri: 2},
		resourcesync.Link{Rel: "alternate", Href: "http://original.example.com/res1.txt", Type: "text/plain"},
		resourcesync.Link{Rel: "license", Href: "http://creativecommons.org/licenses/by/4.0/"},
	)
	copyTime := t0.Add(24 * time.Hour)
	copySHA := strings.Repeat("ab", 32)
	held := map[string]Copy{
		"http://original.example.com/meta.xml": {URI: "http://agg/c/r/http/original.example.com/meta.xml", Hash: resourcesync.Hashes{{Alg: "sha-256", Value: copySHA}}, Length: i64(10), Modified: copyTime},
		"http://original.example.com/res1.pdf": {URI: "http://agg/c/r/http/original.example.com/res1.pdf", Type: "application/pdf", Length: i64(99)},
	}
	resolve := func(ctx context.Context, href string) (Copy, bool, error) {
		c, ok := held[href]
		return c, ok, nil
	}
	links, err := Links(context.Background(), up, resolve)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range links {
		got = append(got, l.Rel+" "+l.Href)
	}
	want := []string{
		"via http://original.example.com/res1.html",
		"collection http://original.example.com/aggregation/0601007",
		"memento http://original.example.com/20130103070000/res1",
		"timegate http://original.example.com/timegate/res1",
		"timemap http://original.example.com/timemap/res1",
		"original http://original.example.com/res1.html",
		"describedby http://agg/c/r/http/original.example.com/meta.xml", // held: the copy
		"describedby http://original.example.com/dc.xml",                // not held: the origin's
		"describes http://original.example.com/missing",
		"profile http://purl.org/dc/elements/1.1/",
		"alternate http://agg/c/r/http/original.example.com/res1.pdf", // held; res1.txt is not, and goes
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("links:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	d := links[6]
	if d.Type != "application/xml" || d.Hash.Get("sha-256") != copySHA || d.Hash.Get("md5") != "" || *d.Length != 10 || !d.Modified.Equal(copyTime) {
		t.Errorf("rewritten describedby = %+v", d)
	}
	if m := links[2]; !m.Modified.Equal(t0) || m.Hash.String() != md5sum.String() || *m.Length != 8876 || m.Type != "text/html" {
		t.Errorf("memento = %+v, want the origin's attributes", m)
	}
	if k := links[7]; k.Hash.String() != md5sum.String() || k.Extra != nil || k.Type != "application/xml" {
		t.Errorf("kept describedby = %+v, want its md5 and type only", k)
	}
	if a := links[10]; a.Pri != 2 || a.Type != "application/pdf" {
		t.Errorf("alternate = %+v", a)
	}
}

func TestResolverError(t *testing.T) {
	boom := errors.New("boom")
	up := originChange(resourcesync.Link{Rel: "describedby", Href: "http://x/m"})
	_, err := Links(context.Background(), up, func(context.Context, string) (Copy, bool, error) { return Copy{}, false, boom })
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want wrapped boom", err)
	}
}
