package resourcesync

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// specRoot holds every example of the specs as a file; the tests fail, never
// skip, when it is missing.
const specRoot = "testdata/spec"

// specDirs are the directories of specRoot that hold the examples.
var specDirs = []string{"examples-1.0", "examples-1.1", "examples-notification"}

// fuzzLimits are the limits the fuzz targets read under: small enough that
// the fuzzer reaches them.
var fuzzLimits = Limits{MaxBytes: 1 << 20, MaxDecompressed: 4 << 20, MaxEntries: 1000, MaxAttrLen: 4096, MaxURILen: 2048, MaxDepth: 16, MaxChildren: 64}

// addSpecSeeds adds every example of the specs to f's seed corpus.
func addSpecSeeds(f *testing.F) {
	f.Helper()
	for _, dir := range specDirs {
		m, _ := filepath.Glob(filepath.Join(specRoot, dir, "*.xml"))
		if len(m) == 0 {
			f.Fatalf("no seed examples in %s", dir)
		}
		for _, p := range m {
			data, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
}

// readAll reads a whole document, with entry lines cleared so that
// documents can be compared as data.
func readAll(t testing.TB, data []byte, lim Limits) (*Header, []*Entry) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data), lim)
	if err != nil {
		t.Fatalf("NewReader: %v", err)
	}
	var es []*Entry
	for {
		e, err := r.Next()
		if err == io.EOF {
			return r.Header(), es
		}
		if err != nil {
			t.Fatalf("Next after %d entries: %v", len(es), err)
		}
		e.Line = 0
		es = append(es, e)
	}
}

// writeAll writes a document from a header and entries.
func writeAll(t testing.TB, h *Header, es []*Entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, h)
	if err != nil {
		t.Fatalf("NewWriter: %v", err)
	}
	for _, e := range es {
		if err := w.Write(e); err != nil {
			t.Fatalf("Write: %v", err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return buf.Bytes()
}

// roundTrip checks that a document written from what was read reads back
// as the same data.
func roundTrip(t testing.TB, h *Header, es []*Entry) {
	t.Helper()
	out := writeAll(t, h, es)
	h2, es2 := readAll(t, out, Limits{})
	if !reflect.DeepEqual(h, h2) {
		t.Errorf("header after write and read:\n got %+v\nwant %+v\n%s", h2, h, out)
	}
	if len(es2) != len(es) {
		t.Fatalf("%d entries after write and read, want %d", len(es2), len(es))
	}
	for i := range es {
		if !reflect.DeepEqual(es[i], es2[i]) {
			t.Errorf("entry %d after write and read:\n got %+v\nwant %+v", i, es2[i], es[i])
		}
	}
}

// probe returns one value of a read document, named as the conformance
// table names it: "h.at", "h.ln.up" (href), "1.loc", "1.hash" (rs:md),
// "1.ln.duplicate.pri". For links, want is matched against every link of
// the rel, since an entry may have several.
func probe(h *Header, es []*Entry, key, want string) (string, bool) {
	parts := strings.Split(key, ".")
	if parts[0] == "h" {
		if parts[1] == "ln" {
			for _, l := range h.Links {
				if l.Rel == strings.Join(parts[2:], ".") && l.Href == want {
					return want, true
				}
			}
			return "(no such link)", false
		}
		got := mdAttr(&h.MD, parts[1])
		return got, got == want
	}
	i, err := strconv.Atoi(parts[0])
	if err != nil || i >= len(es) {
		return "(no entry " + parts[0] + ")", false
	}
	e := es[i]
	switch parts[1] {
	case "loc":
		return e.Loc, e.Loc == want
	case "lastmod":
		got := FormatTime(e.LastMod)
		return got, got == want
	case "ln":
		attr := parts[len(parts)-1]
		rel := strings.Join(parts[2:len(parts)-1], ".")
		var seen []string
		for j := range e.Links {
			if e.Links[j].Rel != rel {
				continue
			}
			got := linkAttr(&e.Links[j], attr)
			if got == want {
				return got, true
			}
			seen = append(seen, got)
		}
		return strings.Join(seen, "|"), false
	}
	if e.MD == nil {
		return "(no rs:md)", false
	}
	got := mdAttr(e.MD, parts[1])
	return got, got == want
}

func mdAttr(m *MD, name string) string {
	switch name {
	case "capability":
		return m.Capability
	case "at":
		return fmtTime(m.At)
	case "completed":
		return fmtTime(m.Completed)
	case "from":
		return fmtTime(m.From)
	case "until":
		return fmtTime(m.Until)
	case "datetime":
		return fmtTime(m.DateTime)
	case "change":
		return m.Change
	case "hash":
		return m.Hash.String()
	case "length":
		return fmtLength(m.Length)
	case "type":
		return m.Type
	case "encoding":
		return m.Encoding
	case "path":
		return m.Path
	}
	return "(unknown attribute " + name + ")"
}

func linkAttr(l *Link, name string) string {
	switch name {
	case "href":
		return l.Href
	case "modified":
		return fmtTime(l.Modified)
	case "hash":
		return l.Hash.String()
	case "length":
		return fmtLength(l.Length)
	case "type":
		return l.Type
	case "encoding":
		return l.Encoding
	case "path":
		return l.Path
	case "pri":
		return strconv.Itoa(l.Pri)
	}
	return "(unknown attribute " + name + ")"
}

func fmtLength(n *int64) string {
	if n == nil {
		return ""
	}
	return strconv.FormatInt(*n, 10)
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return FormatTime(t)
}
