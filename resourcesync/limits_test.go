package resourcesync

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

const docHead = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:md capability="resourcelist" at="2013-01-03T09:00:00Z"/>
`

// doc makes a Resource List from entry XML.
func doc(entries ...string) string {
	return docHead + strings.Join(entries, "\n") + "\n</urlset>\n"
}

func urlEl(loc string, inner ...string) string {
	return "<url><loc>" + loc + "</loc>" + strings.Join(inner, "") + "</url>"
}

// readErr reads a whole document and returns the first error other than
// io.EOF, from NewReader or Next.
func readErr(data []byte, lim Limits) error {
	r, err := NewReader(bytes.NewReader(data), lim)
	if err != nil {
		return err
	}
	for {
		_, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// wantLimit checks that err is a fatal or non-fatal *Error naming limit.
func wantLimit(t *testing.T, err error, limit string, fatal bool) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want *Error", err, err)
	}
	if e.Limit != limit || e.Fatal != fatal || e.Line == 0 {
		t.Errorf("Error{Line %d, Limit %q, Fatal %v}: %v; want limit %q, fatal %v", e.Line, e.Limit, e.Fatal, e, limit, fatal)
	}
}

func TestLimits(t *testing.T) {
	many := doc(urlEl("http://example.com/1"), urlEl("http://example.com/2"), urlEl("http://example.com/3"))
	long := "http://example.com/" + strings.Repeat("a", 200)
	deep := docHead + "<url><loc>http://example.com/a</loc>" + strings.Repeat("<x:e xmlns:x='urn:x'>", 20) + strings.Repeat("</x:e>", 20) + "</url></urlset>"
	for _, c := range []struct {
		name  string
		doc   string
		lim   Limits
		fatal bool
	}{
		{"MaxBytes", many, Limits{MaxBytes: 100}, true},
		{"MaxEntries", many, Limits{MaxEntries: 2}, true},
		{"MaxURILen", doc(urlEl(long)), Limits{MaxURILen: 100}, false},
		{"MaxURILen", doc(urlEl("http://example.com/a", `<rs:ln rel="duplicate" href="`+long+`"/>`)), Limits{MaxURILen: 100}, false},
		{"MaxAttrLen", doc(urlEl("http://example.com/a", `<rs:md type="`+strings.Repeat("t", 200)+`"/>`)), Limits{MaxAttrLen: 100}, false},
		{"MaxAttrLen", doc(urlEl("http://example.com/a", `<changefreq>`+strings.Repeat("d", 200)+`</changefreq>`)), Limits{MaxAttrLen: 100}, false},
		{"MaxAttrLen", doc(urlEl("http://example.com/a", `<x:e xmlns:x="urn:x">`+strings.Repeat("d", 200)+`</x:e>`)), Limits{MaxAttrLen: 100}, false},
		{"MaxDepth", deep, Limits{MaxDepth: 10}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := readErr([]byte(c.doc), Limits{}); err != nil {
				t.Fatalf("within the default limits: %v", err)
			}
			wantLimit(t, readErr([]byte(c.doc), c.lim), c.name, c.fatal)
		})
	}
}

// TestValueLimitSkipsEntry shows that a value over a limit costs only its
// entry.
func TestValueLimitSkipsEntry(t *testing.T) {
	d := doc(urlEl("http://example.com/"+strings.Repeat("a", 200)), urlEl("http://example.com/b"))
	r, err := NewReader(strings.NewReader(d), Limits{MaxURILen: 100})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Next()
	wantLimit(t, err, "MaxURILen", false)
	e, err := r.Next()
	if err != nil || e.Loc != "http://example.com/b" {
		t.Fatalf("after the long loc: %v, %v", e, err)
	}
}

func gz(t testing.TB, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestGzip(t *testing.T) {
	plain := []byte(doc(urlEl("http://example.com/a", "<lastmod>2013-01-02T13:00:00Z</lastmod>"), urlEl("http://example.com/b")))
	h1, es1 := readAll(t, plain, Limits{})
	h2, es2 := readAll(t, gz(t, plain), Limits{})
	if !reflect.DeepEqual(h1, h2) || !reflect.DeepEqual(es1, es2) || len(es2) != 2 {
		t.Errorf("gzip document reads differently: %+v %+v", h2, es2)
	}
}

func TestGzipBomb(t *testing.T) {
	// 4 MiB of white space inside the root compresses to a few KiB.
	bomb := gz(t, []byte(docHead+strings.Repeat(" ", 4<<20)+"</urlset>"))
	if len(bomb) > 100<<10 {
		t.Fatalf("bomb is %d bytes", len(bomb))
	}
	wantLimit(t, readErr(bomb, Limits{MaxDecompressed: 1 << 20}), "MaxDecompressed", true)
	if err := readErr(bomb, Limits{}); err != nil {
		t.Errorf("within the default limit: %v", err)
	}
}

// TestBadValueSkipsEntry: a bad datetime, hash, length or pri fails its
// entry alone, with its line, and the next entry still reads.
func TestBadValueSkipsEntry(t *testing.T) {
	for _, bad := range []string{
		"<lastmod>2013-13-01</lastmod>",
		"<lastmod>yesterday</lastmod>",
		`<rs:md hash="md5"/>`,
		`<rs:md length="-4"/>`,
		`<rs:md length="ten"/>`,
		`<rs:md datetime="2013-01-02T25:00:00Z"/>`,
		`<rs:ln rel="duplicate" href="http://m.example.com/a" pri="0"/>`,
		`<rs:ln rel="duplicate" href="http://m.example.com/a" modified="2013-02-30"/>`,
		`<rs:md/><rs:md/>`,
	} {
		t.Run(bad, func(t *testing.T) {
			d := doc(urlEl("http://example.com/a"), "<url><loc>http://example.com/bad</loc>\n"+bad+"</url>", urlEl("http://example.com/c"))
			r, err := NewReader(strings.NewReader(d), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if e, err := r.Next(); err != nil || e.Loc != "http://example.com/a" {
				t.Fatalf("first entry: %v %v", e, err)
			}
			_, err = r.Next()
			var re *Error
			if !errors.As(err, &re) || re.Fatal || re.Line != 6 {
				t.Fatalf("bad entry: %#v, want a non-fatal *Error on line 6", err)
			}
			if e, err := r.Next(); err != nil || e.Loc != "http://example.com/c" {
				t.Fatalf("entry after the bad one: %v %v", e, err)
			}
			if _, err := r.Next(); err != io.EOF {
				t.Fatalf("end: %v", err)
			}
		})
	}
}

// TestRefused: what is not a well-formed Sitemap stops the reading.
func TestRefused(t *testing.T) {
	for name, d := range map[string]string{
		"html":              "<!DOCTYPE html><html><head><title>x</title></head></html>",
		"html no decl":      "<html><body>hello</body></html>",
		"wrong root":        `<feed xmlns="http://www.w3.org/2005/Atom"></feed>`,
		"no namespace":      `<urlset><url><loc>http://example.com/a</loc></url></urlset>`,
		"wrong ns":          `<urlset xmlns="http://example.com/ns"><url><loc>http://example.com/a</loc></url></urlset>`,
		"doctype":           `<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY a "aaaaaaaaaa">]>` + doc(urlEl("&a;"))[len(`<?xml version="1.0" encoding="UTF-8"?>`):],
		"entity":            doc(urlEl("http://example.com/&lol;")),
		"empty":             "",
		"text":              "hello",
		"truncated":         doc(urlEl("http://example.com/a"))[:len(docHead)+20],
		"mismatched":        doc("<url><loc>http://example.com/a</lastmod></url>"),
		"second root":       doc(urlEl("http://example.com/a")) + "<urlset/>",
		"sitemap in urlset": doc("<sitemap><loc>http://example.com/a</loc></sitemap>"),
		"undeclared prefix": doc(urlEl("http://example.com/a", "<x:e/>")),
	} {
		t.Run(name, func(t *testing.T) {
			err := readErr([]byte(d), Limits{})
			var e *Error
			if !errors.As(err, &e) || !e.Fatal {
				t.Fatalf("error %v, want a fatal *Error", err)
			}
		})
	}
	err := readErr([]byte("<html><body>hello</body></html>"), Limits{})
	if !errors.Is(err, ErrNotSitemap) || !strings.Contains(err.Error(), "html") {
		t.Errorf("HTML: %v, want ErrNotSitemap naming the root", err)
	}
}

func TestMaxChildren(t *testing.T) {
	links := strings.Repeat(`<rs:ln rel="duplicate" href="http://m.example.com/a"/>`, 20)
	d := doc(urlEl("http://example.com/a", links), urlEl("http://example.com/b"))
	if err := readErr([]byte(d), Limits{}); err != nil {
		t.Fatalf("within the default limits: %v", err)
	}
	r, err := NewReader(strings.NewReader(d), Limits{MaxChildren: 10})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Next()
	wantLimit(t, err, "MaxChildren", false)
	if e, err := r.Next(); err != nil || e.Loc != "http://example.com/b" {
		t.Fatalf("entry after: %v %v", e, err)
	}
	head := strings.Replace(doc(urlEl("http://example.com/a")), "<url>", links+"<url>", 1)
	wantLimit(t, readErr([]byte(head), Limits{MaxChildren: 10}), "MaxChildren", true)
}

func TestLatin1(t *testing.T) {
	d := []byte(strings.Replace(doc(urlEl("http://example.com/caf\xe9")), "UTF-8", "ISO-8859-1", 1))
	_, es := readAll(t, d, Limits{})
	if len(es) != 1 || es[0].Loc != "http://example.com/café" {
		t.Errorf("entries %+v", es)
	}
	d = []byte(strings.Replace(doc(urlEl("http://example.com/a")), "UTF-8", "EBCDIC", 1))
	if err := readErr(d, Limits{}); err == nil || !strings.Contains(err.Error(), "EBCDIC") {
		t.Errorf("EBCDIC: %v", err)
	}
}
