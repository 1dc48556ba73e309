package resourcesync

import (
	"encoding/xml"
	"reflect"
	"strings"
	"testing"
)

const extDoc = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:rs="http://www.openarchives.org/rs/terms/"
        xmlns:dc="http://purl.org/dc/terms/"
        xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
        xsi:schemaLocation="http://www.sitemaps.org/schemas/sitemap/0.9 sitemap.xsd">
  <rs:md capability="resourcelist" at="2013-01-03T09:00:00Z" dc:audience="all"/>
  <dc:title xml:lang="en">Dataset &amp; more</dc:title>
  <url>
    <loc> http://example.com/res1 </loc>
    <changefreq>daily</changefreq>
    <priority>0.5</priority>
    <rs:md hash="MD5:1584ABDF8EBDC9802AC0C6A7402C03B6" length="8876" type="application/pdf"
           dc:rights="cc-by" x:note="n" xmlns:x="urn:x" unknown="u"/>
    <rs:ln rel="duplicate" href="http://mirror.example.com/res1" pri="1" dc:source="m"/>
    <image:image xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
      <image:loc>http://example.com/res1.png</image:loc><dc:creator>A &lt;B&gt;</dc:creator>
    </image:image>
  </url>
</urlset>
`

func TestExtensions(t *testing.T) {
	h, es := readAll(t, []byte(extDoc), Limits{})
	dc := "http://purl.org/dc/terms/"
	wantRoot := []xml.Attr{
		{Name: xml.Name{Space: "xmlns", Local: "dc"}, Value: dc},
		{Name: xml.Name{Space: "xmlns", Local: "xsi"}, Value: "http://www.w3.org/2001/XMLSchema-instance"},
		{Name: xml.Name{Space: "http://www.w3.org/2001/XMLSchema-instance", Local: "schemaLocation"}, Value: "http://www.sitemaps.org/schemas/sitemap/0.9 sitemap.xsd"},
	}
	if !reflect.DeepEqual(h.RootAttrs, wantRoot) {
		t.Errorf("root attributes %v, want %v", h.RootAttrs, wantRoot)
	}
	if !reflect.DeepEqual(h.MD.Extra, []xml.Attr{{Name: xml.Name{Space: dc, Local: "audience"}, Value: "all"}}) {
		t.Errorf("header rs:md extra %v", h.MD.Extra)
	}
	if len(h.Extra) != 1 || h.Extra[0].Name != (xml.Name{Space: dc, Local: "title"}) ||
		string(h.Extra[0].XML) != `<dc:title xml:lang="en" xmlns:dc="http://purl.org/dc/terms/">Dataset &amp; more</dc:title>` {
		t.Errorf("header extension %+v %s", h.Extra, h.Extra[0].XML)
	}
	e := es[0]
	if e.Loc != "http://example.com/res1" || e.ChangeFreq != "daily" || e.MD.Hash.Get(MD5) != "1584abdf8ebdc9802ac0c6a7402c03b6" {
		t.Errorf("entry %+v", e)
	}
	wantExtra := []xml.Attr{
		{Name: xml.Name{Space: dc, Local: "rights"}, Value: "cc-by"},
		{Name: xml.Name{Space: "urn:x", Local: "note"}, Value: "n"},
		{Name: xml.Name{Local: "unknown"}, Value: "u"},
	}
	if !reflect.DeepEqual(e.MD.Extra, wantExtra) {
		t.Errorf("entry rs:md extra %v, want %v", e.MD.Extra, wantExtra)
	}
	if l := e.Link("duplicate"); l == nil || l.Pri != 1 || len(l.Extra) != 1 || l.Extra[0].Value != "m" {
		t.Errorf("link %+v", l)
	}
	if len(e.Extra) != 2 || e.Extra[0].Name.Local != "priority" || e.Extra[1].Name.Space != "http://www.google.com/schemas/sitemap-image/1.1" {
		t.Fatalf("entry extensions %+v", e.Extra)
	}
	img := string(e.Extra[1].XML)
	if !strings.HasSuffix(img, `xmlns:dc="http://purl.org/dc/terms/">`+"\n      "+`<image:loc>http://example.com/res1.png</image:loc><dc:creator>A &lt;B&gt;</dc:creator>`+"\n    </image:image>") {
		t.Errorf("image extension %s", img)
	}
	roundTrip(t, h, es)
	// Extensions written by a program (namespaces the root does not
	// declare) survive too.
	h2 := &Header{MD: MD{Capability: CapResourceList, Extra: []xml.Attr{{Name: xml.Name{Space: "urn:y", Local: "a"}, Value: `q"<&>`}}}}
	roundTrip(t, h2, []*Entry{{Loc: "http://example.com/a", MD: &MD{Extra: []xml.Attr{{Name: xml.Name{Space: "urn:y", Local: "b"}, Value: "v"}, {Name: xml.Name{Space: "urn:z", Local: "c"}, Value: "w"}}}}})
}
