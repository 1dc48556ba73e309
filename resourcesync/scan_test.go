package resourcesync

import (
	"strings"
	"testing"
)

const (
	sHead = `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">` + "\n"
	sTail = "\n</urlset>\n"
)

// sDoc is a urlset around one entry whose loc is loc and whose other
// children are inner.
func sDoc(loc, inner string) string {
	return sHead + "<url><loc>" + loc + "</loc>" + inner + "</url>" + sTail
}

// scannerGood are documents with every construct the scanner reads.
var scannerGood = []string{
	sDoc("http://example.com/a?x=1&amp;y=&lt;&gt;&quot;&apos;", ""),
	sDoc("http://example.com/&#x41;&#66;&#x1F600;", ""),
	sDoc("<![CDATA[http://example.com/a<b>&amp;]]>", ""),
	sDoc("http://example.com/a", "<!-- a comment - with dashes --><?pi some data?>"),
	sDoc("http://example.com/a", `<rs:md hash='md5:1584abdf8ebdc9802ac0c6a7402c03b6' type = "text/html"  length="12"/>`),
	sDoc("http://example.com/a", `<rs:md type="a&#xD;&#xA;&#9;b&quot;'>]]>"/>`),
	sDoc("http://example.com/a", "<x:e xmlns:x='urn:x' x:a='1'>t<![CDATA[<c>]]><!--c--><?p q?><x:f/></x:e>"),
	sDoc("http://example.com/a", "<é:ü xmlns:é='urn:e'>text</é:ü>"),
	sDoc("http://example.com/a\r\nb\rc", ""),
	"\uFEFF" + sDoc("http://example.com/a", ""),
	strings.Replace(sDoc("http://example.com/caf\xe9", ""), "UTF-8", "ISO-8859-1", 1),
	strings.Replace(sDoc("http://example.com/a", ""), "UTF-8", "us-ascii", 1),
	"<?xml version='1.0'?><urlset xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'><url><loc>http://example.com/a</loc></url></urlset><!-- after --><?after?>\n",
	sHead + "<url>\n<loc>\nhttp://example.com/a\n</loc>\n<lastmod>2013-01-02</lastmod>\n</url>\n<url><loc>http://example.com/b</loc></url>" + sTail,
}

// scannerBad are documents that are not well formed.
var scannerBad = []string{
	sDoc("http://example.com/&lol;", ""),
	sDoc("http://example.com/&amp", ""),
	sDoc("http://example.com/& ", ""),
	sDoc("http://example.com/&#;", ""),
	sDoc("http://example.com/&#x;", ""),
	sDoc("http://example.com/&#X41;", ""),
	sDoc("http://example.com/&#0;", ""),
	sDoc("http://example.com/&#x110000;", ""),
	sDoc("http://example.com/&#99999999999999999999999;", ""),
	sDoc("http://example.com/\x01", ""),
	sDoc("http://example.com/\xff", ""),
	sDoc("http://example.com/\xc3", ""),
	sDoc("http://example.com/a]]>", ""),
	sDoc("http://example.com/a", `<rs:md type="a<b"/>`),
	sDoc("http://example.com/a", `<rs:md type="a&b"/>`),
	sDoc("http://example.com/a", `<rs:md type=a/>`),
	sDoc("http://example.com/a", `<rs:md type/>`),
	sDoc("http://example.com/a", "<rs:md type=\"\x01\"/>"),
	sDoc("http://example.com/a", `<rs:md type="a/>`),
	sDoc("http://example.com/a", `<rs:md / >`),
	sDoc("http://example.com/a", `<1a/>`),
	sDoc("http://example.com/a", `<a:b:c/>`),
	sDoc("http://example.com/a", `<-a/>`),
	sDoc("http://example.com/a", `< a/>`),
	sDoc("http://example.com/a", `<a></b>`),
	sDoc("http://example.com/a", `<a></a x>`),
	sDoc("http://example.com/a", `<!-- a -- b -->`),
	sDoc("http://example.com/a", `<!- a -->`),
	sDoc("http://example.com/a", `<![CDAT[x]]>`),
	sDoc("http://example.com/a", `<!ELEMENT a>`),
	sDoc("http://example.com/a", `<?1pi?>`),
	sDoc("http://example.com/a", `<? pi?>`),
	sDoc("http://example.com/a", `<x:e xmlns:x=""/>`),
	"<?xml version='1.1'?>" + sDoc("http://example.com/a", "")[len(`<?xml version="1.0" encoding="UTF-8"?>`):],
	strings.Replace(sDoc("http://example.com/a", ""), "UTF-8", "EBCDIC", 1),
	`<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY a "b">]><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"/>`,
	sHead + "<url><loc>http://example.com/a</loc></url>",
	sHead + "<url><loc>http://example.com/a</loc></url></urlset><!-- x",
	sHead + "<url><loc>http://example.com/a</loc><!-- x",
	sHead + "<url><loc><![CDATA[http://example.com/a",
	sHead + "<url><loc>http://example.com/a</loc><?pi x",
	sHead + "<url><loc>http://example.com/a</loc><rs:md type='x",
	sHead + "<url><loc>http://example.com/a</loc><rs:md",
	sHead + "<url><loc>http://example.com/a</loc></url",
	sHead + "<url><loc>http://example.com/a</loc></url></urlset>x",
	sHead + "<url><loc>http://example.com/a</loc></url></urlset><url/>",
}

// scannerCases seed FuzzScannerMatchesXML.
var scannerCases = append(append([]string{}, scannerGood...), scannerBad...)

// TestScannerAgreesWithXML reads documents that use every construct, and
// documents broken in every way the scanner checks, with the scanner and
// with encoding/xml: the good ones must read, the bad ones must stop with
// a fatal Error, and both readers must say the same.
func TestScannerAgreesWithXML(t *testing.T) {
	lim := Limits{}
	for i, d := range scannerGood {
		scan, ref := scanOutcome([]byte(d), lim), xmlOutcome([]byte(d), lim)
		if scan.fatal != nil || len(scan.entries) == 0 {
			t.Errorf("good %d: %v, %d entries, on\n%q", i, scan.fatal, len(scan.entries), d)
			continue
		}
		for j, e := range scan.errs {
			if e != nil {
				t.Errorf("good %d, entry %d: %v", i, j, e)
			}
		}
		t.Run("good", func(t *testing.T) { compareOutcomes(t, []byte(d), scan, ref) })
	}
	for i, d := range scannerBad {
		scan, ref := scanOutcome([]byte(d), lim), xmlOutcome([]byte(d), lim)
		if scan.fatal == nil {
			t.Errorf("bad %d: read without a fatal error:\n%q", i, d)
			continue
		}
		if scan.fatal.Line == 0 {
			t.Errorf("bad %d: error without a line: %v", i, scan.fatal)
		}
		t.Run("bad", func(t *testing.T) { compareOutcomes(t, []byte(d), scan, ref) })
	}
}

// TestScannerValues checks what the scanner makes of references, CDATA,
// line ends and encodings.
func TestScannerValues(t *testing.T) {
	for d, want := range map[string]string{
		scannerGood[0]:  "http://example.com/a?x=1&y=<>\"'",
		scannerGood[1]:  "http://example.com/AB\U0001F600",
		scannerGood[2]:  "http://example.com/a<b>&amp;",
		scannerGood[8]:  "http://example.com/a\nb\nc",
		scannerGood[10]: "http://example.com/café",
	} {
		_, es := readAll(t, []byte(d), Limits{})
		if len(es) != 1 || es[0].Loc != want {
			t.Errorf("loc %q, want %q", es[0].Loc, want)
		}
	}
	_, es := readAll(t, []byte(scannerGood[5]), Limits{})
	if got := es[0].MD.Type; got != "a\r\n\tb\"'>]]>" {
		t.Errorf("type %q", got)
	}
	es = scanOutcome([]byte(scannerGood[13]), Limits{}).entries
	if len(es) != 2 || es[0].Line != 3 || es[1].Line != 9 || es[0].Loc != "http://example.com/a" {
		t.Errorf("entries %+v %+v", es[0], es[1])
	}
}
