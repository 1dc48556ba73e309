package resourcesync

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var updateGolden = flag.Bool("update", false, "rewrite the writer's golden files under testdata/golden")

func mustTime(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := ParseTime(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func i64(n int64) *int64 { return &n }

// TestWriterGolden writes a few documents and compares them byte for byte
// with testdata/golden; go test -run TestWriterGolden -update rewrites
// them.
func TestWriterGolden(t *testing.T) {
	up := []Link{{Rel: "up", Href: "http://example.com/dataset1/capabilitylist.xml"}}
	cet := time.FixedZone("CET", 3600)
	cases := []struct {
		name    string
		header  *Header
		entries []*Entry
	}{
		{"capabilitylist", &Header{
			MD:    MD{Capability: CapCapabilityList},
			Links: []Link{{Rel: "describedby", Href: "http://example.com/info.xml"}, {Rel: "up", Href: "http://example.com/.well-known/resourcesync"}},
		}, []*Entry{
			{Loc: "http://example.com/dataset1/resourcelist.xml", MD: &MD{Capability: CapResourceList}},
			{Loc: "http://example.com/dataset1/changelist.xml", MD: &MD{Capability: CapChangeList}},
			{Loc: "http://example.com/dataset1/change/", MD: &MD{Capability: CapChangeNotification}, Links: []Link{{Rel: "hub", Href: "http://hub.example.org/websub/"}}},
		}},
		{"changelist-1.1", &Header{
			MD:    MD{Capability: CapChangeList, From: mustTime(t, "2013-01-02T00:00:00Z"), Until: mustTime(t, "2013-01-03T00:00:00+01:00")},
			Links: up,
		}, []*Entry{
			{Loc: "http://example.com/res1.pdf?a=1&b=2", LastMod: time.Date(2013, 1, 2, 14, 0, 0, 0, cet),
				MD: &MD{Change: Updated, DateTime: time.Date(2013, 1, 2, 13, 0, 0, 250_000_000, time.UTC), Hash: Hashes{{MD5, "1584abdf8ebdc9802ac0c6a7402c03b6"}, {SHA256, "854f61290e2e197a11bc91063afce22e43f8ccc655237050ace766adc68dc784"}}, Length: i64(8876), Type: "application/pdf"}},
			{Loc: "http://example.com/res2.pdf", MD: &MD{Change: Deleted, DateTime: mustTime(t, "2013-01-02T14:00:00Z")}},
		}},
		{"resourcedump-index", &Header{
			Root:      SitemapIndex,
			MD:        MD{Capability: CapResourceDump, At: mustTime(t, "2013-01-03T09:00:00Z"), Completed: mustTime(t, "2013-01-03T09:04:00Z")},
			Links:     up,
			RootAttrs: []xml.Attr{{Name: xml.Name{Space: "xmlns", Local: "dc"}, Value: "http://purl.org/dc/terms/"}},
		}, []*Entry{
			{Loc: "http://example.com/resourcedump1.xml", MD: &MD{At: mustTime(t, "2013-01-03T09:00:00Z"), Extra: []xml.Attr{{Name: xml.Name{Space: "http://purl.org/dc/terms/", Local: "extent"}, Value: `1 "part"`}}},
				Links: []Link{{Rel: "duplicate", Href: "http://mirror.example.com/resourcedump1.xml", Pri: 2, Modified: mustTime(t, "2013-01-03"), Hash: Hashes{{MD5, "1e0d5cb8ef6ba40c99b14c0237be735e"}}, Length: i64(0)}},
				Extra: []Element{{Name: xml.Name{Space: "http://purl.org/dc/terms/", Local: "title"}, XML: []byte(`<dc:title xmlns:dc="http://purl.org/dc/terms/">Part &lt;1&gt;</dc:title>`)}}},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := writeAll(t, c.header, c.entries)
			path := filepath.Join("testdata", "golden", c.name+".xml")
			if *updateGolden {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the golden file:\n%s\nwant:\n%s", c.name, got, want)
			}
			h, es := readAll(t, got, Limits{})
			if h.Kind() != c.header.Kind() || len(es) != len(c.entries) {
				t.Errorf("read back as %s with %d entries", h.Kind(), len(es))
			}
			for i := range es {
				if es[i].Loc != c.entries[i].Loc || !es[i].ChangeTime().Equal(c.entries[i].ChangeTime()) {
					t.Errorf("entry %d read back as %+v", i, es[i])
				}
			}
		})
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	if f.n -= len(p); f.n < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

// TestWriterErrorSticks: a failed write is reported, and again on every
// later call, so a caller that checks only Close still learns of it.
func TestWriterErrorSticks(t *testing.T) {
	w, err := NewWriter(&failWriter{n: 1 << 20}, &Header{MD: MD{Capability: CapResourceList}})
	if err != nil {
		t.Fatal(err)
	}
	e := &Entry{Loc: "http://example.com/" + string(bytes.Repeat([]byte("a"), 1000))}
	var werr error
	for i := 0; i < 5000 && werr == nil; i++ {
		werr = w.Write(e)
	}
	if werr == nil {
		t.Fatal("no error from writes past the writer's capacity")
	}
	if err := w.Close(); err == nil {
		t.Error("Close after a failed write returned nil")
	}
}
