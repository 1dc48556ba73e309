package republish

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// locs returns the locs of a document's entries, checking it validates.
func (f *fixture) locs(t *testing.T, path string) (*resourcesync.Header, []string, int) {
	t.Helper()
	resp, body := f.get(t, path)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", path, resp.Status)
	}
	validate(t, path, body)
	rd, err := resourcesync.NewReader(strings.NewReader(string(body)), resourcesync.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	h := rd.Header()
	var out []string
	for {
		e, err := rd.Next()
		if err != nil {
			break
		}
		out = append(out, e.Loc)
	}
	return h, out, len(body)
}

func TestIndexSplitting(t *testing.T) {
	f := newFixture(t, Config{MaxEntries: 10})
	for i := range 25 {
		f.add("alpha", fmt.Sprintf("http://origin.example.com/r%03d", i), "created", base.Add(time.Duration(i)*time.Second), "x", "text/plain", viaduct.Change{})
	}
	h, parts, _ := f.locs(t, "/alpha/resourcelist.xml")
	if h.Kind() != resourcesync.KindResourceListIndex || len(parts) != 3 || h.MD.At.IsZero() || h.MD.Completed.IsZero() {
		t.Fatalf("index %s with %d parts, at %v completed %v", h.Kind(), len(parts), h.MD.At, h.MD.Completed)
	}
	// Changes after the index: one new resource, one deleted.
	f.add("alpha", "http://origin.example.com/r0055", "created", base.Add(time.Minute), "x", "text/plain", viaduct.Change{})
	f.add("alpha", "http://origin.example.com/r012", "deleted", base.Add(2*time.Minute), "", "", viaduct.Change{})
	seen := map[string]int{}
	for _, p := range parts {
		ph, locs, _ := f.locs(t, strings.TrimPrefix(p, f.srv.cfg.BaseURL))
		if ph.Root != resourcesync.URLSet || ph.Link("index") == nil || ph.Link("up") == nil || ph.MD.At.IsZero() {
			t.Errorf("part %s: header %+v", p, ph)
		}
		if len(locs) > 11 {
			t.Errorf("part %s: %d entries", p, len(locs))
		}
		for _, l := range locs {
			seen[l]++
		}
	}
	if len(seen) != 25 {
		t.Errorf("parts cover %d resources, want 25 (24 held throughout and one created)", len(seen))
	}
	for l, n := range seen {
		if n != 1 {
			t.Errorf("%s listed %d times", l, n)
		}
	}
	if seen[f.srv.cfg.BaseURL+"/alpha/r/http/origin.example.com/r012"] != 0 || seen[f.srv.cfg.BaseURL+"/alpha/r/http/origin.example.com/r0055"] != 1 {
		t.Errorf("deleted or created after the index: %v", seen)
	}
}

func TestIndexSplittingBytes(t *testing.T) {
	const maxBytes = 8192
	f := newFixture(t, Config{MaxBytes: maxBytes})
	for i := range 60 {
		f.add("alpha", fmt.Sprintf("http://origin.example.com/%s/%03d?a=1&b=2", strings.Repeat("long", 20), i), "created",
			base.Add(time.Duration(i)*time.Second), "x", "text/plain", viaduct.Change{
				Links: []resourcesync.Link{{Rel: "via", Href: fmt.Sprintf("http://o.example/%d", i), Hash: resourcesync.Hashes{{Alg: "md5", Value: strings.Repeat("a", 32)}}}},
			})
	}
	h, parts, _ := f.locs(t, "/alpha/resourcelist.xml")
	if h.Root != resourcesync.SitemapIndex || len(parts) < 2 {
		t.Fatalf("want an index, got %s with %d entries", h.Kind(), len(parts))
	}
	total := 0
	for _, p := range parts {
		_, locs, size := f.locs(t, strings.TrimPrefix(p, f.srv.cfg.BaseURL))
		if size > maxBytes {
			t.Errorf("part %s: %d bytes > %d", p, size, maxBytes)
		}
		total += len(locs)
	}
	if total != 60 {
		t.Errorf("parts hold %d entries, want 60", total)
	}
}

func TestChangeListsConsecutive(t *testing.T) {
	f := newFixture(t, Config{ChangeListPeriod: 10 * time.Minute})
	const n = 200
	for i := range n {
		op := "updated"
		if i%7 == 0 {
			op = "created"
		}
		f.add("alpha", fmt.Sprintf("http://origin.example.com/r%d", i%13), op, base.Add(time.Duration(i)*37*time.Second+time.Duration(i)), "x", "text/plain", viaduct.Change{})
	}
	ih, lists, _ := f.locs(t, "/alpha/changelist.xml")
	if ih.Kind() != resourcesync.KindChangeListIndex {
		t.Fatalf("index kind %s", ih.Kind())
	}
	var prevUntil, prevAt time.Time
	total := 0
	for i, l := range lists {
		h, _, _ := f.locs(t, strings.TrimPrefix(l, f.srv.cfg.BaseURL))
		if i == 0 && !h.MD.From.Equal(ih.MD.From) {
			t.Errorf("first list from %v, index from %v", h.MD.From, ih.MD.From)
		}
		if i > 0 && !h.MD.From.Equal(prevUntil) {
			t.Errorf("list %d from %v, previous until %v", i, h.MD.From, prevUntil)
		}
		last := i == len(lists)-1
		if last != h.MD.Until.IsZero() {
			t.Errorf("list %d (last %v): until %v", i, last, h.MD.Until)
		}
		prevUntil = h.MD.Until
		_, body := f.get(t, strings.TrimPrefix(l, f.srv.cfg.BaseURL))
		rd, _ := resourcesync.NewReader(strings.NewReader(string(body)), resourcesync.DefaultLimits())
		rd.Header()
		for {
			e, err := rd.Next()
			if err != nil {
				break
			}
			at := e.ChangeTime()
			if !e.LastMod.Equal(at) || !at.After(prevAt) || at.Before(h.MD.From) || (!h.MD.Until.IsZero() && !at.Before(h.MD.Until)) {
				t.Errorf("list %d: change at %v (lastmod %v) outside [%v, %v) or not after %v", i, at, e.LastMod, h.MD.From, h.MD.Until, prevAt)
			}
			prevAt = at
			total++
		}
	}
	if total != n {
		t.Errorf("lists hold %d changes, want %d", total, n)
	}
}
