package resourcesync

import (
	"bytes"
	"testing"
	"time"
)

// TestWriteLocSameAsWrite writes the same entries with Write and WriteLoc
// and wants the same bytes, escaping included.
func TestWriteLocSameAsWrite(t *testing.T) {
	n := int64(7)
	entries := []Entry{
		{Loc: "http://example.com/a", LastMod: time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC), MD: &MD{Length: &n, Type: "text/plain"}},
		{Loc: "http://example.com/b?x=1&y=<2>", Links: []Link{{Rel: "via", Href: "http://o.example.com/b"}}},
		{Loc: "http://example.com/caf\u00e9\x01"},
	}
	for _, root := range []Root{URLSet, SitemapIndex} {
		var a, b bytes.Buffer
		h := &Header{Root: root, MD: MD{Capability: CapResourceList}}
		wa, err := NewWriter(&a, h)
		if err != nil {
			t.Fatal(err)
		}
		wb, err := NewWriter(&b, h)
		if err != nil {
			t.Fatal(err)
		}
		for i := range entries {
			e := entries[i]
			if err := wa.Write(&e); err != nil {
				t.Fatal(err)
			}
			loc := []byte(e.Loc)
			e.Loc = "ignored"
			if err := wb.WriteLoc(loc, &e); err != nil {
				t.Fatal(err)
			}
		}
		if err := wb.WriteLoc(nil, &Entry{}); err == nil {
			t.Error("WriteLoc without loc: no error")
		}
		wa.Close()
		wb.Close()
		if a.String() != b.String() {
			t.Errorf("root %v: WriteLoc wrote\n%s\nWrite wrote\n%s", root, b.String(), a.String())
		}
	}
}
