package resourcesync

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// memParts keeps the documents of a split list in memory, by URI.
type memParts struct {
	docs    map[string]*bytes.Buffer
	created []int
	open    int
}

type memDoc struct {
	*bytes.Buffer
	p *memParts
}

func (d memDoc) Close() error { d.p.open--; return nil }

func (p *memParts) Create(n int) (io.WriteCloser, string, error) {
	if p.docs == nil {
		p.docs = map[string]*bytes.Buffer{}
	}
	uri := fmt.Sprintf("http://example.com/list-%d.xml", n)
	if n == 0 {
		uri = "http://example.com/list-index.xml"
	}
	b := new(bytes.Buffer)
	p.docs[uri] = b
	p.created = append(p.created, n)
	p.open++
	return memDoc{b, p}, uri, nil
}

var _ Parts = (*memParts)(nil)

func splitEntries(n int) []*Entry {
	es := make([]*Entry, n)
	for i := range es {
		es[i] = &Entry{Loc: fmt.Sprintf("http://example.com/res%d", i), MD: &MD{Change: Updated, DateTime: time.Date(2013, 1, 2, i, 0, 0, 0, time.UTC)}}
	}
	return es
}

func writeSplit(t *testing.T, p *memParts, h *Header, cfg SplitConfig, es []*Entry) *SplitResult {
	t.Helper()
	cfg.TempDir = t.TempDir()
	s, err := NewSplitWriter(p, h, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if err := s.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	res, err := s.Close()
	if err != nil {
		t.Fatal(err)
	}
	if p.open != 0 {
		t.Errorf("%d documents left open", p.open)
	}
	if left, _ := os.ReadDir(cfg.TempDir); len(left) != 0 {
		t.Errorf("spool files left: %v", left)
	}
	return res
}

func TestSplitIndex(t *testing.T) {
	h := &Header{
		MD:    MD{Capability: CapChangeList, From: mustTime(t, "2013-01-02T00:00:00Z"), Until: mustTime(t, "2013-01-03T00:00:00Z")},
		Links: []Link{{Rel: "up", Href: "http://example.com/capabilitylist.xml"}},
	}
	var p memParts
	es := splitEntries(7)
	res := writeSplit(t, &p, h, SplitConfig{MaxEntries: 3}, es)
	if !res.Index || res.URI != "http://example.com/list-index.xml" || len(res.Parts) != 3 || res.Entries != 7 {
		t.Fatalf("result %+v", res)
	}
	ih, idx := readAll(t, p.docs[res.URI].Bytes(), Limits{})
	if ih.Kind() != KindChangeListIndex || ih.Link("up") == nil || ih.Link("index") != nil || len(idx) != 3 {
		t.Fatalf("index %+v with %d entries", ih, len(idx))
	}
	wantIntervals := [][2]string{
		{"2013-01-02T00:00:00Z", "2013-01-02T02:00:00Z"},
		{"2013-01-02T02:00:00Z", "2013-01-02T05:00:00Z"},
		{"2013-01-02T05:00:00Z", "2013-01-03T00:00:00Z"},
	}
	var all []*Entry
	for i, ie := range idx {
		if ie.Loc != res.Parts[i] || FormatTime(ie.MD.From) != wantIntervals[i][0] || FormatTime(ie.MD.Until) != wantIntervals[i][1] {
			t.Errorf("index entry %d: %s %v %v", i, ie.Loc, ie.MD.From, ie.MD.Until)
		}
		ph, pes := readAll(t, p.docs[ie.Loc].Bytes(), Limits{})
		if ph.Kind() != KindChangeList || ph.Link("index") == nil || ph.Link("index").Href != res.URI ||
			ph.Link("up") == nil || ph.Link("up").Href != "http://example.com/capabilitylist.xml" {
			t.Errorf("part %d header %+v", i+1, ph)
		}
		if want := min(3, 7-3*i); len(pes) != want {
			t.Errorf("part %d has %d entries, want %d", i+1, len(pes), want)
		}
		all = append(all, pes...)
	}
	for i := range es {
		if all[i].Loc != es[i].Loc {
			t.Fatalf("entry %d is %s, want %s", i, all[i].Loc, es[i].Loc)
		}
	}
}

func TestSplitBytes(t *testing.T) {
	h := &Header{MD: MD{Capability: CapResourceList, At: mustTime(t, "2013-01-03T09:00:00Z")}}
	var p memParts
	es := splitEntries(40)
	for _, e := range es {
		e.Loc += "/" + strings.Repeat("x", 200)
	}
	max := int64(reserve + 1500)
	res := writeSplit(t, &p, h, SplitConfig{MaxBytes: max}, es)
	if !res.Index || len(res.Parts) < 3 {
		t.Fatalf("result %+v", res)
	}
	n := 0
	for _, uri := range res.Parts {
		if size := int64(p.docs[uri].Len()); size > max {
			t.Errorf("%s: %d bytes, more than %d", uri, size, max)
		}
		_, pes := readAll(t, p.docs[uri].Bytes(), Limits{})
		n += len(pes)
	}
	_, idx := readAll(t, p.docs[res.URI].Bytes(), Limits{})
	if n != 40 || len(idx) != len(res.Parts) || !idx[0].MD.At.Equal(h.MD.At) {
		t.Errorf("%d entries in %d parts, index %+v", n, len(res.Parts), idx[0].MD)
	}
}

func TestSplitOnePart(t *testing.T) {
	for _, n := range []int{0, 1, 3} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			h := &Header{MD: MD{Capability: CapResourceList}, Links: []Link{{Rel: "up", Href: "http://example.com/capabilitylist.xml"}}}
			var p memParts
			res := writeSplit(t, &p, h, SplitConfig{MaxEntries: 3}, splitEntries(n))
			if res.Index || len(res.Parts) != 1 || res.URI != res.Parts[0] || len(p.created) != 1 || p.created[0] != 1 {
				t.Fatalf("result %+v, created %v", res, p.created)
			}
			ph, pes := readAll(t, p.docs[res.URI].Bytes(), Limits{})
			if ph.Link("index") != nil || ph.Link("up") == nil || len(pes) != n {
				t.Errorf("single part %+v with %d entries", ph, len(pes))
			}
		})
	}
}
