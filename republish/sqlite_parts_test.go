package republish

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
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
		if gotResp.StatusCode != wantResp.StatusCode || !bytes.Equal(got, want) {
			t.Errorf("GET %s from SQLite: %s\n%s\nfrom memory: %s\n%s", name, gotResp.Status, got, wantResp.Status, want)
		}
		if int64(len(want)) > cfg.MaxBytes && !strings.Contains(string(want), "big&amp;") {
			t.Errorf("GET %s: %d bytes, over the limit", name, len(want))
		}
	}
}
