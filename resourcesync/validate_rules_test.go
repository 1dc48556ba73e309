package resourcesync

import (
	"strings"
	"testing"
	"time"
)

// ts parses a test time and fails the test when it cannot.
func ts(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// run validates a hand-built document.
func run(h *Header, opts Options, entries ...*Entry) *Report {
	v := NewValidator(h, opts)
	for i, e := range entries {
		if e.Line == 0 {
			e.Line = 10 + i
		}
		v.Entry(e)
	}
	return v.Finish()
}

// wantProblem fails unless r holds a problem of sev at line whose message
// contains sub.
func wantProblem(t *testing.T, r *Report, sev Severity, line int, sub string) {
	t.Helper()
	for _, p := range r.Problems {
		if p.Severity == sev && p.Line == line && strings.Contains(p.Msg, sub) {
			return
		}
	}
	t.Errorf("no %s at line %d containing %q; got:\n%s", sev, line, sub, dump(r))
}

// wantClean fails when r holds any problem.
func wantClean(t *testing.T, r *Report) {
	t.Helper()
	if len(r.Problems) > 0 {
		t.Errorf("want no problem, got:\n%s", dump(r))
	}
}

func dump(r *Report) string {
	var b strings.Builder
	for _, p := range r.Problems {
		b.WriteString("  " + p.String() + "\n")
	}
	return b.String()
}

func up(href string) []Link { return []Link{{Rel: "up", Href: href}} }

func change(loc, ch string, tm time.Time) *Entry {
	return &Entry{Loc: loc, LastMod: tm, MD: &MD{Change: ch}}
}

func TestValidateChangeList(t *testing.T) {
	from, until := ts(t, "2013-01-02T00:00:00Z"), ts(t, "2013-01-03T00:00:00Z")
	h := &Header{MD: MD{Capability: CapChangeList, From: from, Until: until}, Links: up("http://example.com/cl.xml")}

	r := run(h, Options{},
		change("http://example.com/a", Created, ts(t, "2013-01-02T10:00:00Z")),
		change("http://example.com/b", Updated, ts(t, "2013-01-02T11:00:00Z")))
	wantClean(t, r)
	if r.Kind != KindChangeList || r.Entries != 2 || !r.From.Equal(from) || !r.Until.Equal(until) {
		t.Errorf("summary %+v", r.Summary)
	}

	r = run(h, Options{},
		change("http://example.com/a", Created, ts(t, "2013-01-02T10:00:00Z")),
		change("http://example.com/b", Updated, ts(t, "2013-01-02T09:00:00Z")),
		change("http://example.com/c", "", ts(t, "2013-01-02T12:00:00Z")),
		change("http://example.com/d", "moved", ts(t, "2013-01-02T12:00:00Z")),
		change("http://example.com/e", Deleted, ts(t, "2013-01-04T12:00:00Z")),
		change("http://example.com/f", Deleted, ts(t, "2013-01-01T12:00:00Z")),
		change("", Deleted, ts(t, "2013-01-04T12:00:00Z")),
		change("res/relative", Deleted, time.Time{}))
	// Order, the interval and relative URIs are the reader's warnings
	// (tolerate_test.go): a Validator fed entries by hand does not see them.
	wantProblem(t, r, SeverityError, 12, "no rs:md change")
	wantProblem(t, r, SeverityError, 13, `change "moved"`)
	wantProblem(t, r, SeverityError, 16, "no loc")
	wantProblem(t, r, SeverityWarning, 17, "neither lastmod nor rs:md datetime")
	if r.Errors != 3 {
		t.Errorf("want 3 errors, got:\n%s", dump(r))
	}
}

func TestValidateChangeTimeIsDatetime(t *testing.T) {
	// 1.1: datetime orders the list; an older lastmod is the resource's own.
	h := &Header{MD: MD{Capability: CapChangeList, From: ts(t, "2013-01-02T00:00:00Z")}, Links: up("http://example.com/c")}
	a := change("http://example.com/a", Created, ts(t, "2011-01-01T00:00:00Z"))
	a.MD.DateTime = ts(t, "2013-01-02T10:00:00Z")
	b := change("http://example.com/b", Created, ts(t, "2013-01-02T11:00:00Z"))
	wantClean(t, run(h, Options{}, a, b))
}

func TestValidateHeaderTimes(t *testing.T) {
	for _, c := range []struct {
		name string
		md   MD
		root Root
		sev  Severity
		sub  string
	}{
		{"notification without from", MD{Capability: CapChangeNotification, Until: ts(t, "2013-01-03T00:00:00Z")}, URLSet, SeverityError, "no from"},
		{"from after until", MD{Capability: CapChangeDump, From: ts(t, "2013-01-03T00:00:00Z"), Until: ts(t, "2013-01-02T00:00:00Z")}, URLSet, SeverityError, "is after until"},
		{"completed before at", MD{Capability: CapResourceDump, At: ts(t, "2013-01-03T00:00:00Z"), Completed: ts(t, "2013-01-02T00:00:00Z")}, URLSet, SeverityError, "before at"},
		{"notification without until", MD{Capability: CapChangeNotification, From: ts(t, "2013-01-03T00:00:00Z")}, URLSet, SeverityError, "no until"},
		{"from on a resource list", MD{Capability: CapResourceList, At: ts(t, "2013-01-03T00:00:00Z"), From: ts(t, "2013-01-03T00:00:00Z")}, URLSet, SeverityWarning, "from/until is not used"},
		{"at on a change list", MD{Capability: CapChangeList, From: ts(t, "2013-01-03T00:00:00Z"), At: ts(t, "2013-01-03T00:00:00Z")}, URLSet, SeverityWarning, "at/completed is not used"},
		{"unknown capability", MD{Capability: "resourcelisting"}, URLSet, SeverityError, "unknown capability"},
		{"no capability", MD{}, URLSet, SeverityError, "no capability"},
		{"manifest index", MD{Capability: CapResourceDumpManifest, At: ts(t, "2013-01-03T00:00:00Z")}, SitemapIndex, SeverityError, "urlset root"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run(&Header{Root: c.root, MD: c.md, Links: up("http://example.com/c")}, Options{})
			wantProblem(t, r, c.sev, 0, c.sub)
		})
	}
}

func TestValidateUpLinks(t *testing.T) {
	cl := MD{Capability: CapChangeList, From: ts(t, "2013-01-03T00:00:00Z")}
	wantProblem(t, run(&Header{MD: cl}, Options{}), SeverityWarning, 0, "no rel=\"up\" link to its Capability List")
	wantProblem(t, run(&Header{MD: MD{Capability: CapCapabilityList}}, Options{}), SeverityWarning, 0, "to the Source Description")
	wantProblem(t, run(&Header{MD: cl, Links: up("http://a.example/x")}, Options{Up: "http://a.example/y"}), SeverityWarning, 0, "not to http://a.example/y")
	wantProblem(t, run(&Header{MD: MD{Capability: CapDescription}, Links: up("http://a.example/x")}, Options{}), SeverityWarning, 0, "top of the Source")
	// A notification's up link is optional.
	n := MD{Capability: CapChangeNotification, From: ts(t, "2013-01-03T00:00:00Z"), Until: ts(t, "2013-01-03T00:10:00Z")}
	wantClean(t, run(&Header{MD: n}, Options{}))
	// An index does not point to an index.
	wantProblem(t, run(&Header{Root: SitemapIndex, MD: cl, Links: append(up("http://a.example/c"), Link{Rel: "index", Href: "http://a.example/i"})}, Options{}),
		SeverityWarning, 0, "rel=\"index\"")
	wantProblem(t, run(&Header{MD: cl, Links: append(up("http://a.example/c"), Link{Rel: "index"})}, Options{}), SeverityError, 0, "has no href")
}

func TestValidateCapabilityList(t *testing.T) {
	h := &Header{MD: MD{Capability: CapCapabilityList}, Links: up("http://example.com/sd")}
	capEntry := func(c string, links ...Link) *Entry {
		return &Entry{Loc: "http://example.com/" + c, MD: &MD{Capability: c}, Links: links}
	}
	r := run(h, Options{},
		capEntry(CapResourceList),
		capEntry(CapChangeList),
		capEntry("changelists"),
		capEntry(CapResourceDumpManifest),
		capEntry(CapChangeList),
		&Entry{Loc: "http://example.com/x"},
		capEntry(CapChangeNotification),
		capEntry(CapResourceDump),
	)
	wantProblem(t, r, SeverityError, 12, `unknown capability "changelists"`)
	wantProblem(t, r, SeverityError, 13, "a Capability List points to")
	// A second changelist entry (line 14) is the reader's warning.
	wantProblem(t, r, SeverityError, 15, "no rs:md capability")
	wantProblem(t, r, SeverityError, 16, "no rel=\"hub\"")
	if r.Errors != 4 || r.Warnings != 0 {
		t.Errorf("want 4 errors and no warning, got:\n%s", dump(r))
	}
	wantClean(t, run(h, Options{}, capEntry(CapChangeNotification, Link{Rel: "hub", Href: "http://hub.example.org/"})))
}

func TestValidateSourceDescription(t *testing.T) {
	h := &Header{MD: MD{Capability: CapDescription}}
	r := run(h, Options{},
		&Entry{Loc: "http://example.com/cap1", MD: &MD{Capability: CapCapabilityList}},
		&Entry{Loc: "http://example.com/cap2"},
		&Entry{Loc: "http://example.com/rl", MD: &MD{Capability: CapResourceList}})
	wantProblem(t, r, SeverityError, 12, "Capability Lists only")
	if r.Errors != 1 || r.Warnings != 0 {
		t.Errorf("want 1 error, got:\n%s", dump(r))
	}
	wantProblem(t, run(h, Options{}), SeverityWarning, 0, "lists no Capability List")
}

func TestValidateManifests(t *testing.T) {
	at := ts(t, "2013-01-03T09:00:00Z")
	rdm := &Header{MD: MD{Capability: CapResourceDumpManifest, At: at}, Links: up("http://example.com/c")}
	r := run(rdm, Options{},
		&Entry{Loc: "http://example.com/a", MD: &MD{Path: "/res/a"}},
		&Entry{Loc: "http://example.com/b", MD: &MD{Hash: Hashes{{MD5, "1584abdf8ebdc9802ac0c6a7402c03b6"}}}},
		&Entry{Loc: "http://example.com/c", MD: &MD{Path: "/res/../../etc/passwd"}},
		&Entry{Loc: "http://example.com/d", MD: &MD{Path: "res/d"}})
	wantProblem(t, r, SeverityError, 11, "no rs:md path")
	wantProblem(t, r, SeverityError, 12, "leaves the package")
	wantProblem(t, r, SeverityWarning, 13, "does not start with /")

	cdm := &Header{MD: MD{Capability: CapChangeDumpManifest, From: at}, Links: up("http://example.com/c")}
	r = run(cdm, Options{},
		&Entry{Loc: "http://example.com/a", LastMod: at, MD: &MD{Change: Deleted}},
		&Entry{Loc: "http://example.com/b", LastMod: at, MD: &MD{Change: Updated}})
	wantProblem(t, r, SeverityError, 11, "no rs:md path")
	if r.Errors != 1 {
		t.Errorf("a deletion needs no path, got:\n%s", dump(r))
	}
}

func TestValidateDumps(t *testing.T) {
	at := ts(t, "2013-01-03T09:00:00Z")
	n := int64(10)
	rd := &Header{MD: MD{Capability: CapResourceDump, At: at}, Links: up("http://example.com/c")}
	r := run(rd, Options{},
		&Entry{Loc: "http://example.com/1.zip", MD: &MD{Type: "application/zip", Length: &n}},
		&Entry{Loc: "http://example.com/2.zip"},
		&Entry{Loc: "http://example.com/3.tar", MD: &MD{Type: "application/x-tar", Length: &n}},
		&Entry{Loc: "http://example.com/4.zip", MD: &MD{Type: "application/zip", At: at.Add(time.Minute), Completed: at}})
	wantProblem(t, r, SeverityWarning, 11, "lacks rs:md type and length")
	wantProblem(t, r, SeverityWarning, 12, "package format is ZIP")
	wantProblem(t, r, SeverityWarning, 12, "one format")
	wantProblem(t, r, SeverityError, 13, "completed 2013-01-03T09:00:00Z is before its at")
	if r.Errors != 1 {
		t.Errorf("want 1 error, got:\n%s", dump(r))
	}
}

func TestValidateChangeListIndex(t *testing.T) {
	d := func(s string) time.Time { return ts(t, "2013-01-0"+s+"T00:00:00Z") }
	child := func(from, until time.Time) *Entry {
		return &Entry{Loc: "http://example.com/cl", MD: &MD{From: from, Until: until}}
	}
	open := &Header{Root: SitemapIndex, MD: MD{Capability: CapChangeList, From: d("1")}, Links: up("http://example.com/c")}
	wantClean(t, run(open, Options{}, child(d("1"), d("2")), child(d("2"), d("3")), child(d("3"), time.Time{})))

	r := run(open, Options{},
		child(d("2"), d("3")),
		child(d("1"), d("2")),
		child(d("4"), d("3")),
		child(d("5"), time.Time{}),
		child(d("6"), d("7")),
		&Entry{Loc: "http://example.com/cl"})
	wantProblem(t, r, SeverityError, 11, "forward chronological order")
	wantProblem(t, r, SeverityError, 12, "is after its until")
	wantProblem(t, r, SeverityWarning, 14, "line 13 has no until")
	wantProblem(t, r, SeverityWarning, 15, "no rs:md from")

	closed := &Header{Root: SitemapIndex, MD: MD{Capability: CapChangeList, From: d("2"), Until: d("4")}, Links: up("http://example.com/c")}
	r = run(closed, Options{},
		child(d("1"), d("2")),
		child(d("2"), d("3")),
		child(d("3"), time.Time{}),
		child(d("4"), d("5")))
	wantProblem(t, r, SeverityError, 10, "before the document's from")
	wantProblem(t, r, SeverityError, 12, "the Change List Index is closed")
	wantProblem(t, r, SeverityError, 13, "after the document's until")

	gap := run(open, Options{}, child(d("1"), d("2")), child(d("3"), d("4")), child(d("3"), d("5")))
	wantProblem(t, gap, SeverityWarning, 11, "gap")
	wantProblem(t, gap, SeverityWarning, 12, "overlaps")
}

func TestValidateValues(t *testing.T) {
	h := &Header{MD: MD{Capability: CapResourceList, At: ts(t, "2013-01-03T09:00:00Z")}, Links: up("http://example.com/c")}
	neg := int64(-1)
	r := run(h, Options{},
		&Entry{Loc: "http://example.com/a", MD: &MD{Length: &neg, Type: "html"}},
		&Entry{Loc: "http://example.com/b"},
		&Entry{Loc: "http://example.com/c", Links: []Link{{Rel: "duplicate", Href: "http://mirror.example.com/c", Pri: 1000000, Length: &neg}}},
		&Entry{Loc: "http://example.com/d", LastMod: ts(t, "2013-01-04T00:00:00Z"), ChangeFreq: "sometimes", MD: &MD{Change: Created}})
	wantProblem(t, r, SeverityError, 10, "length -1 is negative")
	wantProblem(t, r, SeverityWarning, 10, `type "html"`)
	wantProblem(t, r, SeverityWarning, 12, "pri 1000000")
	wantProblem(t, r, SeverityError, 12, `rs:ln rel="duplicate": length -1`)
	wantProblem(t, r, SeverityWarning, 13, "after the snapshot")
	wantProblem(t, r, SeverityWarning, 13, "changefreq")
	wantProblem(t, r, SeverityWarning, 13, "change attribute is not used")
}

func TestValidateMaxProblems(t *testing.T) {
	h := &Header{MD: MD{Capability: CapChangeList, From: ts(t, "2013-01-03T00:00:00Z")}, Links: up("http://example.com/c")}
	v := NewValidator(h, Options{MaxProblems: 3})
	for i := 0; i < 10; i++ {
		v.Entry(&Entry{Line: i + 1, Loc: "http://example.com/a", LastMod: ts(t, "2013-01-03T01:00:00Z")})
	}
	r := v.Finish()
	if len(r.Problems) != 3 || r.Errors != 10 || r.Dropped != 7 || r.OK(false) {
		t.Errorf("kept %d, errors %d, dropped %d", len(r.Problems), r.Errors, r.Dropped)
	}
}
