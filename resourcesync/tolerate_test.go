package resourcesync

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// readAll reads doc from base and returns its header, entries and warnings,
// failing on any reader error: a tolerated form is read, not refused.
func readTolerant(t *testing.T, base, doc string) (*Header, []*Entry, []Warning) {
	t.Helper()
	rd, err := NewReaderAt(strings.NewReader(doc), base, Limits{})
	if err != nil {
		t.Fatalf("header: %v", err)
	}
	var es []*Entry
	for {
		e, err := rd.Next()
		if err == io.EOF {
			return rd.Header(), es, rd.Warnings()
		}
		if err != nil {
			t.Fatalf("entry %d: %v", len(es)+1, err)
		}
		es = append(es, e)
	}
}

// wantWarning fails unless ws has kind, count times, first at line.
func wantWarning(t *testing.T, ws []Warning, kind WarningKind, count, line int) {
	t.Helper()
	for _, w := range ws {
		if w.Kind == kind {
			if w.Count != count || w.Line != line || w.Msg == "" {
				t.Errorf("%s: %d times, first at line %d (%q); want %d times at line %d", kind, w.Count, w.Line, w.Msg, count, line)
			}
			return
		}
	}
	t.Errorf("no %s warning among %+v", kind, ws)
}

const tolHead = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
`

// TestReaderZonelessTimes: WEKO and resync-based Sources write Python's
// isoformat of a naive datetime; Java producers an offset without colon.
func TestReaderZonelessTimes(t *testing.T) {
	h, es, ws := readTolerant(t, "", tolHead+`<rs:md capability="changelist" from="2018-11-06T12:00:00"/>
<url><loc>http://example.org/a</loc><lastmod>2018-11-06T12:13:50</lastmod><rs:md change="created"/></url>
<url><loc>http://example.org/b</loc><lastmod>2018-11-06T12:13:51.5</lastmod><rs:md change="created"/></url>
<url><loc>http://example.org/c</loc><rs:md change="updated" datetime="2018-11-06 13:13:50+0100"/></url>
</urlset>`)
	if want := time.Date(2018, 11, 6, 12, 0, 0, 0, time.UTC); !h.MD.From.Equal(want) {
		t.Errorf("from %v, want %v", h.MD.From, want)
	}
	for i, want := range []string{"2018-11-06T12:13:50Z", "2018-11-06T12:13:51.5Z", "2018-11-06T12:13:50Z"} {
		if got := FormatTime(es[i].ChangeTime()); got != want {
			t.Errorf("entry %d at %s, want %s", i, got, want)
		}
	}
	wantWarning(t, ws, WarnZonelessTime, 3, 0)
	wantWarning(t, ws, WarnTimeForm, 1, 6)
	// Still refused: what is no time at all.
	_, err := NewReader(strings.NewReader(tolHead+`<rs:md capability="changelist" from="2018-11-06 13h00"/></urlset>`), Limits{})
	if err == nil {
		t.Error(`from="2018-11-06 13h00" was read`)
	}
}

// TestReaderCapabilitySpellings: capabilityList (case), the 0.9 draft's
// resourcesync description and rel="resourcesync" up link, changelistindex.
func TestReaderCapabilitySpellings(t *testing.T) {
	h, es, ws := readTolerant(t, "", tolHead+`<rs:md capability="capabilityList"/>
<rs:ln rel="resourcesync" href="http://example.org/rs/description.xml"/>
<url><loc>http://example.org/rs/resourcelist.xml</loc><rs:md capability="ResourceList"/></url>
<url><loc>http://example.org/rs/changelists.xml</loc><rs:md capability="changelistindex"/></url>
</urlset>`)
	if h.Kind() != KindCapabilityList || es[0].MD.Capability != CapResourceList {
		t.Errorf("read %s with a %q entry", h.Kind(), es[0].MD.Capability)
	}
	if l := h.Link("up"); l == nil || l.Href != "http://example.org/rs/description.xml" {
		t.Errorf("no up link to the description: %+v", h.Links)
	}
	wantWarning(t, ws, WarnCapabilityCase, 2, 0)
	wantWarning(t, ws, WarnDraft, 1, 0)
	wantWarning(t, ws, WarnCapabilityVariant, 1, 6)

	h, _, ws = readTolerant(t, "", tolHead+`<rs:md capability="resourcesync"/>
<url><loc>http://example.org/rs/capabilitylist.xml</loc><rs:md capability="capabilitylist"/></url></urlset>`)
	if h.Kind() != KindSourceDescription {
		t.Errorf("0.9 description read as %s", h.Kind())
	}
	wantWarning(t, ws, WarnDraft, 1, 0)
}

// TestReaderDuplicateCapabilities: WEKO lists a Resource List and a
// Resource Dump per index in one Capability List; every entry is read.
func TestReaderDuplicateCapabilities(t *testing.T) {
	_, es, ws := readTolerant(t, "", tolHead+`<rs:md capability="capabilitylist"/>
<url><loc>http://example.org/1/resourcelist.xml</loc><rs:md capability="resourcelist"/></url>
<url><loc>http://example.org/2/resourcelist.xml</loc><rs:md capability="resourcelist"/></url>
<url><loc>http://example.org/3/resourcelist.xml</loc><rs:md capability="resourcelist"/></url>
</urlset>`)
	if len(es) != 3 {
		t.Errorf("%d entries read, want 3", len(es))
	}
	wantWarning(t, ws, WarnDuplicateCapability, 2, 5)
}

// TestReaderHashForms: md5 in base64 (resync before 2016), sha-1 and
// sha-256 in base64 and base64url are read as their digests, in hex; a
// digest that is neither is kept and flagged.
func TestReaderHashForms(t *testing.T) {
	_, es, ws := readTolerant(t, "", tolHead+`<rs:md capability="resourcelist" at="2016-01-01T00:00:00Z"/>
<url><loc>http://example.org/a</loc><rs:md hash="md5:sZRqySSS0jR8YjW00mERhA==" length="6"/></url>
<url><loc>http://example.org/b</loc><rs:md hash="sha-1:9XLTlvrpIGYocU+yzgD3LpTyJY8= SHA-256:WJG1tSLV3whtD_CxEPvZ0hu0_HFjrzTQgoai6Eb2vgM"/></url>
<url><loc>http://example.org/c</loc><rs:md hash="md5:B1946AC92492D2347C6235B4D2611184"/></url>
<url><loc>http://example.org/d</loc><rs:md hash="md5:not-a-digest"/>
<rs:ln rel="duplicate" href="http://mirror.example.org/d" hash="md5:sZRqySSS0jR8YjW00mERhA"/></url>
</urlset>`)
	const md5 = "b1946ac92492d2347c6235b4d2611184"
	for i, want := range []string{
		"md5:" + md5,
		"sha-1:f572d396fae9206628714fb2ce00f72e94f2258f sha-256:5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03",
		"md5:" + md5,
		"md5:not-a-digest",
	} {
		if got := es[i].MD.Hash.String(); got != want {
			t.Errorf("entry %d: hash %s, want %s", i, got, want)
		}
	}
	if got := es[3].Links[0].Hash.Get(MD5); got != md5 {
		t.Errorf("link hash %s, want %s", got, md5)
	}
	wantWarning(t, ws, WarnHashBase64, 3, 4)
	wantWarning(t, ws, WarnHashUnreadable, 1, 7)
}

// TestVerifyComparesDigests: what the fetcher's verification rests on.
func TestVerifyComparesDigests(t *testing.T) {
	computed := Hashes{{MD5, "13ed2dcf11d80f4a213591be0c5a97ac"}, {SHA256, strings.Repeat("0", 64)}}
	for _, c := range []struct {
		declared string
		ok       bool
	}{
		{"md5:E+0tzxHYD0ohNZG+DFqXrA==", true},                    // base64, as resync wrote it
		{"md5:E-0tzxHYD0ohNZG-DFqXrA", true},                      // base64url, unpadded
		{"md5:13ED2DCF11D80F4A213591BE0C5A97AC", true},            // hex in capitals
		{"md5:Igtq8HKF0N+Zhy3sfwBwkQ==", false},                   // another digest
		{"md5:220b6af07285d0df99872dec7f007091", false},           // the same, in hex
		{"md5:garbage", true},                                     // unreadable: ignored
		{"md5:garbage sha-256:" + strings.Repeat("1", 64), false}, // the readable one still counts
		{"sha-512:abc", false},                                    // nothing comparable
	} {
		hs, err := ParseHashesLoose(c.declared)
		if err != nil {
			t.Fatalf("%s: %v", c.declared, err)
		}
		// Verify compares digests whatever form the declared value is kept in.
		raw := Hashes{{MD5, strings.TrimPrefix(c.declared, "md5:")}}
		if !strings.HasPrefix(c.declared, "md5:") || strings.Contains(c.declared, " ") {
			raw = hs
		}
		for _, d := range []Hashes{hs, raw} {
			if err := d.Verify(computed); (err == nil) != c.ok {
				t.Errorf("%s (as %s): Verify = %v, want ok %v", c.declared, d, err, c.ok)
			}
		}
	}
}

// TestReaderRelativeURIs: locs and hrefs relative to the document are
// resolved against its URL.
func TestReaderRelativeURIs(t *testing.T) {
	h, es, ws := readTolerant(t, "https://repo.example.org/rs/changelist.xml", tolHead+`<rs:md capability="changelist" from="2016-01-01T00:00:00Z"/>
<rs:ln rel="up" href="capabilitylist.xml"/>
<url><loc>/bitstreams/1/content</loc><rs:md change="created"/><rs:ln rel="describedby" href="../meta/1.xml"/></url>
<url><loc>http://other.example.org/2</loc><rs:md change="created"/></url>
</urlset>`)
	if got := h.Link("up").Href; got != "https://repo.example.org/rs/capabilitylist.xml" {
		t.Errorf("up %s", got)
	}
	if es[0].Loc != "https://repo.example.org/bitstreams/1/content" || es[0].Links[0].Href != "https://repo.example.org/meta/1.xml" {
		t.Errorf("entry read as %s, %s", es[0].Loc, es[0].Links[0].Href)
	}
	if es[1].Loc != "http://other.example.org/2" {
		t.Errorf("absolute loc changed to %s", es[1].Loc)
	}
	wantWarning(t, ws, WarnRelativeURI, 3, 0)
}

// TestReaderChangeListLiberties: a Change List without from, with changes
// outside its interval and out of order (Hyrax newest first), is read
// whole, with one warning of each kind.
func TestReaderChangeListLiberties(t *testing.T) {
	_, es, ws := readTolerant(t, "", tolHead+`<rs:md capability="changelist" until="2016-01-03T00:00:00Z"/>
<url><loc>http://example.org/c</loc><lastmod>2016-01-04T00:00:00Z</lastmod><rs:md change="updated"/></url>
<url><loc>http://example.org/b</loc><lastmod>2016-01-02T00:00:00Z</lastmod><rs:md change="updated"/></url>
<url><loc>http://example.org/a</loc><lastmod>2016-01-01T00:00:00Z</lastmod><rs:md change="created"/></url>
</urlset>`)
	if len(es) != 3 {
		t.Errorf("%d entries read, want 3", len(es))
	}
	wantWarning(t, ws, WarnNoFrom, 1, 0)
	wantWarning(t, ws, WarnOutsideInterval, 1, 4)
	wantWarning(t, ws, WarnUnordered, 2, 5)

	_, _, ws = readTolerant(t, "", tolHead+`<rs:md capability="resourcelist"/>
<url><loc>http://example.org/a</loc></url></urlset>`)
	wantWarning(t, ws, WarnNoAt, 1, 0)
}

// TestValidateReportsReaderWarnings: validate's verdict is the reader's:
// each tolerance a warning, once per kind, an error only with -strict.
func TestValidateReportsReaderWarnings(t *testing.T) {
	doc := tolHead + `<rs:md capability="resourcelist"/>
<rs:ln rel="up" href="capabilitylist.xml"/>
<url><loc>a.pdf</loc><lastmod>2018-11-06T12:13:50</lastmod><rs:md hash="md5:E+0tzxHYD0ohNZG+DFqXrA=="/></url>
<url><loc>b.pdf</loc><lastmod>2018-11-06T12:13:50</lastmod><rs:md hash="md5:E+0tzxHYD0ohNZG+DFqXrA=="/></url>
</urlset>`
	r, err := Validate(strings.NewReader(doc), Limits{}, Options{Base: "http://example.org/rs/resourcelist.xml"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Errors != 0 || r.Warnings != 4 || !r.OK(false) || r.OK(true) {
		t.Errorf("%d errors, %d warnings, want 0 and 4 (no-at, relative-uri, zoneless-time, hash-base64):\n%s", r.Errors, r.Warnings, dump(r))
	}
	wantProblem(t, r, SeverityWarning, 0, "no at attribute")
	wantProblem(t, r, SeverityWarning, 0, `"capabilitylist.xml" is relative: read as http://example.org/rs/capabilitylist.xml (3 times)`)
	wantProblem(t, r, SeverityWarning, 5, "read as UTC (2 times)")
	wantProblem(t, r, SeverityWarning, 5, "base64 digest")
}

// TestReaderNamespaceVariants: the Sitemap namespace with https or a
// trailing slash, the ResourceSync one without its slash, are read as the
// specs' namespaces; any other namespace is still not a Sitemap.
func TestReaderNamespaceVariants(t *testing.T) {
	h, es, ws := readTolerant(t, "", `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="https://www.sitemaps.org/schemas/sitemap/0.9/" xmlns:rs="http://www.openarchives.org/rs/terms">
<rs:md capability="resourcelist" at="2016-01-01T00:00:00Z"/>
<url><loc>http://example.org/a</loc><rs:md length="6"/></url>
</urlset>`)
	if h.Kind() != KindResourceList || len(es) != 1 || es[0].MD == nil || *es[0].MD.Length != 6 {
		t.Errorf("read %s, %d entries", h.Kind(), len(es))
	}
	wantWarning(t, ws, WarnNamespace, 1, 0)
	_, err := NewReader(strings.NewReader(`<urlset xmlns="http://www.google.com/schemas/sitemap/0.84"><url><loc>http://e/</loc></url></urlset>`), Limits{})
	if !errors.Is(err, ErrNotSitemap) {
		t.Errorf("another namespace: %v, want ErrNotSitemap", err)
	}
}

// TestGetReadableDigestsOnly: Get, through which the catalog, the
// harvester's diff and the fetcher's skips compare digests, gives a
// readable digest in hex, and nothing for one that cannot be read.
func TestGetReadableDigestsOnly(t *testing.T) {
	hs := Hashes{{MD5, "E+0tzxHYD0ohNZG+DFqXrA=="}, {SHA256, "not-a-digest"}, {"x-tiger", "Ab"}}
	if got := hs.Get(MD5); got != "13ed2dcf11d80f4a213591be0c5a97ac" {
		t.Errorf("md5 %q", got)
	}
	if got := hs.Get(SHA256); got != "" {
		t.Errorf("unreadable sha-256 given as %q", got)
	}
	if got := hs.Get("x-tiger"); got != "Ab" {
		t.Errorf("other algorithm %q", got)
	}
	if hs.String() != "md5:E+0tzxHYD0ohNZG+DFqXrA== sha-256:not-a-digest x-tiger:Ab" {
		t.Errorf("String %q: the values are kept as given", hs.String())
	}
}

// TestReaderChangeListArchive: DSpace's ResourceSyncJava writes its
// Change List Index as the 0.9 draft's "changelist-archive" sitemapindex,
// children dated by lastmod.
func TestReaderChangeListArchive(t *testing.T) {
	h, es, ws := readTolerant(t, "", `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:md capability="changelist-archive" from="2016-01-01T00:00:00Z" until="2016-01-03T00:00:00Z"/>
<sitemap><loc>http://example.org/rs/changelist_2016-01-02.xml</loc><lastmod>2016-01-02T00:00:00Z</lastmod></sitemap>
</sitemapindex>`)
	if h.Kind() != KindChangeListIndex || len(es) != 1 {
		t.Errorf("read as %s with %d entries", h.Kind(), len(es))
	}
	wantWarning(t, ws, WarnCapabilityVariant, 1, 0)
	// A urlset so named is no index: left as the unknown value it is.
	h, _, _ = readTolerant(t, "", tolHead+`<rs:md capability="changelist-archive"/></urlset>`)
	if h.Kind() != KindUnknown {
		t.Errorf("urlset changelist-archive read as %s", h.Kind())
	}
}
