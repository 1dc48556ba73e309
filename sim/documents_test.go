package sim

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

func TestDiscoveryAndCapabilities(t *testing.T) {
	_, base := serve(t, Config{Resources: 3})

	sd := read(t, base+PathDescription)
	if k := sd.Header.Kind(); k != resourcesync.KindSourceDescription {
		t.Fatalf("Source Description is a %s", k)
	}
	if len(sd.Entries) != 1 || sd.Entries[0].Loc != base+PathCapabilities {
		t.Fatalf("Source Description entries: %+v", sd.Entries)
	}
	cl := read(t, base+PathCapabilities)
	if k := cl.Header.Kind(); k != resourcesync.KindCapabilityList {
		t.Fatalf("Capability List is a %s", k)
	}
	if l := cl.Header.Link("up"); l == nil || l.Href != base+PathDescription {
		t.Fatalf("Capability List up link: %+v", l)
	}
	caps := map[string]string{}
	for _, e := range cl.Entries {
		caps[e.MD.Capability] = e.Loc
	}
	if caps[resourcesync.CapResourceList] != base+PathResourceList || caps[resourcesync.CapChangeList] != base+PathChangeList {
		t.Fatalf("capabilities: %v", caps)
	}

	_, robots := get(t, base+"/robots.txt")
	if !strings.Contains(string(robots), "\nSitemap: "+base+PathResourceList+"\n") {
		t.Fatalf("robots.txt has no Sitemap line for the Resource List:\n%s", robots)
	}
	_, home := get(t, base+"/")
	if !strings.Contains(string(home), `<link rel="resourcesync" href="`+base+PathCapabilities+`">`) {
		t.Fatalf("home page has no resourcesync link:\n%s", home)
	}
}

func TestNoChangeLists(t *testing.T) {
	_, base := serve(t, Config{Resources: 1, NoChangeLists: true})
	for _, e := range read(t, base+PathCapabilities).Entries {
		if e.MD.Capability == resourcesync.CapChangeList {
			t.Fatal("Capability List offers a Change List")
		}
	}
	if resp, _ := get(t, base+PathChangeList); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("Change List Index: %s, want 404", resp.Status)
	}
}

// TestResourceListMatchesBitstreams fetches every resource the Resource List
// names and checks the declared hashes, length and type against what is
// served.
func TestResourceListMatchesBitstreams(t *testing.T) {
	src, base := serve(t, Config{Resources: 40, MinSize: 0, MaxSize: 3000, Seed: 7})
	src.Mutate(20)
	rl := read(t, base+PathResourceList)
	if k := rl.Header.Kind(); k != resourcesync.KindResourceList {
		t.Fatalf("Resource List is a %s", k)
	}
	if l := rl.Header.Link("up"); l == nil || l.Href != base+PathCapabilities {
		t.Fatalf("Resource List up link: %+v", l)
	}
	if rl.Header.MD.At.IsZero() {
		t.Fatal("Resource List has no at")
	}
	if len(rl.Entries) != src.Len() {
		t.Fatalf("Resource List has %d entries, Source has %d live resources", len(rl.Entries), src.Len())
	}
	snap := src.Snapshot()
	for _, e := range rl.Entries {
		resp, body := get(t, e.Loc)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s", e.Loc, resp.Status)
		}
		s, m := sha256.Sum256(body), md5.Sum(body)
		want := resourcesync.Hashes{{Alg: resourcesync.MD5, Value: hex.EncodeToString(m[:])}, {Alg: resourcesync.SHA256, Value: hex.EncodeToString(s[:])}}
		if e.MD.Hash.String() != want.String() {
			t.Errorf("%s: declared %s, served bytes have %s", e.Loc, e.MD.Hash, want)
		}
		if e.MD.Length == nil || *e.MD.Length != int64(len(body)) || resp.ContentLength != int64(len(body)) {
			t.Errorf("%s: declared length %v, Content-Length %d, served %d bytes", e.Loc, e.MD.Length, resp.ContentLength, len(body))
		}
		if e.MD.Type != ContentType || resp.Header.Get("Content-Type") != ContentType {
			t.Errorf("%s: type %q, Content-Type %q", e.Loc, e.MD.Type, resp.Header.Get("Content-Type"))
		}
		if resp.Header.Get("ETag") == "" || resp.Header.Get("Last-Modified") == "" {
			t.Errorf("%s: no validators: %v", e.Loc, resp.Header)
		}
		if it := snap[e.Loc]; it.SHA256 != hex.EncodeToString(s[:]) || it.Deleted {
			t.Errorf("%s: Snapshot says %+v", e.Loc, it)
		}
	}
}

func TestDeclaredHashes(t *testing.T) {
	_, base := serve(t, Config{Resources: 2, Hashes: []string{resourcesync.SHA256}})
	for _, e := range read(t, base+PathResourceList).Entries {
		if len(e.MD.Hash) != 1 || e.MD.Hash[0].Alg != resourcesync.SHA256 {
			t.Fatalf("%s: hash %s, want sha-256 only", e.Loc, e.MD.Hash)
		}
	}
}

// TestResourceListIndex checks that past the part size the Resource List is
// an Index whose parts are each within the size and together name every
// live resource once.
func TestResourceListIndex(t *testing.T) {
	src, base := serve(t, Config{Resources: 25, PartSize: 10})
	src.Delete(3)
	idx := read(t, base+PathResourceList)
	if k := idx.Header.Kind(); k != resourcesync.KindResourceListIndex {
		t.Fatalf("Resource List is a %s, want an Index", k)
	}
	if len(idx.Entries) != 3 {
		t.Fatalf("Index has %d parts, want 3", len(idx.Entries))
	}
	seen := map[string]bool{}
	for _, p := range idx.Entries {
		part := read(t, p.Loc)
		if k := part.Header.Kind(); k != resourcesync.KindResourceList {
			t.Fatalf("%s is a %s", p.Loc, k)
		}
		if l := part.Header.Link("index"); l == nil || l.Href != base+PathResourceList {
			t.Errorf("%s: index link %+v", p.Loc, l)
		}
		if len(part.Entries) > 10 {
			t.Errorf("%s has %d entries, part size is 10", p.Loc, len(part.Entries))
		}
		for _, e := range part.Entries {
			if seen[e.Loc] {
				t.Errorf("%s listed twice", e.Loc)
			}
			seen[e.Loc] = true
		}
	}
	live := 0
	for uri, it := range src.Snapshot() {
		if !it.Deleted {
			live++
			if !seen[uri] {
				t.Errorf("%s is live but in no part", uri)
			}
		}
	}
	if live != len(seen) || live != 22 {
		t.Fatalf("parts name %d resources, %d are live, want 22", len(seen), live)
	}
	if resp, _ := get(t, base+"/resourcelist-4.xml"); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("part past the last: %s", resp.Status)
	}
}

func TestDeletedIs404(t *testing.T) {
	src, _ := serve(t, Config{Resources: 5})
	chs := src.Delete(1)
	if resp, _ := get(t, chs[0].URI); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("deleted %s: %s", chs[0].URI, resp.Status)
	}
	if it := src.Snapshot()[chs[0].URI]; !it.Deleted || it.SHA256 != chs[0].SHA256 {
		t.Fatalf("Snapshot of deleted resource: %+v", it)
	}
}

func TestDeterministic(t *testing.T) {
	mk := func(seed int64) map[string]Item {
		src, err := New(Config{Resources: 30, Seed: seed, BaseURL: "http://s.example"})
		if err != nil {
			t.Fatal(err)
		}
		src.Mutate(30)
		return src.Snapshot()
	}
	a, b, c := mk(3), mk(3), mk(4)
	if len(a) != len(b) {
		t.Fatalf("same seed, %d and %d resources", len(a), len(b))
	}
	for uri, it := range a {
		if b[uri] != it {
			t.Fatalf("same seed, %s differs: %+v and %+v", uri, it, b[uri])
		}
	}
	if c["http://s.example/res/1"] == a["http://s.example/res/1"] {
		t.Fatal("different seeds, same content")
	}
}
