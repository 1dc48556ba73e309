package resourcesync

import (
	"bytes"
	"fmt"
	"testing"
	"time"
)

// changeListDoc builds an n-entry Change List in the 1.1 form, with hashes.
func changeListDoc(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:ln rel="up" href="http://example.com/capabilitylist.xml"/>
<rs:md capability="changelist" from="2013-01-01T00:00:00Z"/>
`)
	t0 := time.Date(2013, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		t := t0.Add(time.Duration(i) * time.Second).Format(time.RFC3339)
		fmt.Fprintf(&b, `<url><loc>http://example.com/res/%d</loc><lastmod>%s</lastmod>`+
			`<rs:md change="updated" datetime="%s" hash="md5:1584abdf8ebdc9802ac0c6a7402c03b6" length="%d" type="text/html"/></url>
`, i, t, t, 1000+i)
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

// BenchmarkValidate validates a 50,000-entry Change List (the spec's largest
// list). allocs/op divided by the entries shows that memory does not build
// up per entry beyond what the reader hands over.
func BenchmarkValidate(b *testing.B) {
	const n = 50000
	doc := changeListDoc(n)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := Validate(bytes.NewReader(doc), Limits{}, Options{})
		if err != nil || r.Errors > 0 || r.Entries != n {
			b.Fatalf("err %v, report %+v", err, r.Summary)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
}

// BenchmarkValidatorRules measures the rules alone, on entries already read.
func BenchmarkValidatorRules(b *testing.B) {
	h := &Header{MD: MD{Capability: CapChangeList, From: time.Date(2013, 1, 1, 0, 0, 0, 0, time.UTC)},
		Links: []Link{{Rel: "up", Href: "http://example.com/capabilitylist.xml"}}}
	n := int64(1234)
	e := &Entry{Loc: "http://example.com/res/1", Line: 7, MD: &MD{Change: Updated,
		Hash: Hashes{{MD5, "1584abdf8ebdc9802ac0c6a7402c03b6"}}, Length: &n, Type: "text/html"}}
	v := NewValidator(h, Options{})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.MD.DateTime = h.MD.From.Add(time.Duration(i) * time.Millisecond)
		v.Entry(e)
	}
	if r := v.Finish(); r.Errors > 0 {
		b.Fatalf("problems:\n%s", dump(r))
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "entries/s")
}
