package catalog

import (
	"context"
	"encoding/xml"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// oddLinks has a link of every field, in the forms a pack tells apart:
// fields equal to the Source's statement and fields that differ, hrefs
// sharing all, part or none of the URI, relations in linkRels and not,
// and extension attributes.
func oddLinks(base *linkBase) []resourcesync.Link {
	other := int64(7)
	same := *base.length
	return []resourcesync.Link{
		{Rel: "via", Href: "https://origin.example.net/files/x", Modified: base.modified,
			Hash: base.hash, Length: &same, Type: base.typ},
		{Rel: "describedby", Href: "https://repo.example.org/items/1/metadata.xml", Type: "application/xml"},
		{Rel: "duplicate", Href: base.uri, Pri: 2, Modified: time.Date(2001, 2, 3, 4, 5, 6, 7, time.FixedZone("", -5*3600)),
			Hash: resourcesync.Hashes{{Alg: "md5", Value: "0123"}}, Length: &other, Encoding: "gzip", Path: "/a b/c"},
		{Rel: "x-local relation", Href: base.uri + "?v=2", Extra: []xml.Attr{{Name: xml.Name{Space: "urn:x", Local: "note"}, Value: "a \x00 b"}}},
		{Href: "relative/href"},
		{Rel: "alternate"},
		{Rel: "via", Href: "https://origin.example.net/files/y", Modified: base.modified.In(time.FixedZone("", 3600)),
			Hash: append(resourcesync.Hashes{}, base.hash[0]), Pri: -3},
	}
}

func testBase() *linkBase {
	n := int64(1 << 40)
	return &linkBase{uri: "https://repo.example.org/bitstreams/1/content",
		modified: time.Date(2020, 5, 6, 7, 8, 9, 0, time.UTC),
		hash:     resourcesync.Hashes{{Alg: "md5", Value: "ab"}, {Alg: "sha-256", Value: "cd"}},
		length:   &n, typ: "application/pdf"}
}

// TestPackedLinksKeepEveryField: links packed against a row read back as
// they were, field for field, and cost less than their JSON; the marks
// for the Source's statement and the shared prefix of the href are what
// make the difference.
func TestPackedLinksKeepEveryField(t *testing.T) {
	base := testBase()
	in := oddLinks(base)
	packed := packLinks(in, base)
	out, err := unpackLinks(packed, base)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("packed links read back as\n%+v\nwant\n%+v", out, in)
	}
	js, err := encodeLinks(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(packed) >= len(js)/2 {
		t.Errorf("packed links take %d bytes, their JSON %d", len(packed), len(js))
	}
	// A via link that repeats the Source's statement is its relation, its
	// flags and its href: the marks stand for the rest.
	via := packLinks(in[:1], base)
	if want := 1 + 1 + 1 + 1 + 1 + 1 + len("https://origin.example.net/files/x") - len("https://"); len(via) != want {
		t.Errorf("a via link repeating the Source's statement packs to %d bytes (%q), want %d", len(via), via, want)
	}
	if got, err := unpackLinks("", base); got != nil || err != nil {
		t.Errorf("no links read as %v, %v", got, err)
	}
}

// TestLinksOfBothFormsRead: a row written before schema 14 keeps its
// links as JSON, which the reads still take; anything else is a corrupt
// pack, reported as one, never links made up.
func TestLinksOfBothFormsRead(t *testing.T) {
	base := testBase()
	in := oddLinks(base)
	js, err := encodeLinks(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := unpackLinks(js, base)
	if err != nil || !reflect.DeepEqual(in, out) {
		t.Fatalf("JSON links read back as %+v, %v", out, err)
	}
	packed := packLinks(in, base)
	short := *base
	short.uri = "https://r"
	noSource := &linkBase{uri: base.uri}
	for name, c := range map[string]struct {
		s    string
		base *linkBase
	}{
		"unknown form":                  {"{}", base},
		"cut short":                     {packed[:len(packed)-1], base},
		"a byte after the last":         {packed + "x", base},
		"no link counted":               {"\x01\x00", base},
		"unknown relation":              {"\x01\x01\xff\x00", base},
		"unknown flag":                  {"\x01\x01\x01\x80\x80\x01", base},
		"href prefix longer than URI":   {packed, &short},
		"marks with no Source's word":   {packed, noSource},
		"more hashes than bytes":        {"\x01\x01\x01\x80\x01\x7f", base},
		"more attributes than bytes":    {"\x01\x01\x01\x80\x20\x7f", base},
		"a count of links beyond bytes": {"\x01\x7f", base},
	} {
		if got, err := unpackLinks(c.s, c.base); !errors.Is(err, errPack) {
			t.Errorf("%s: read as %+v, %v; want errPack", name, got, err)
		}
	}
}

// TestLinksThroughTheCatalog: links applied with an event are what every
// read gives back, the Resource, the Resource List's scan and the Change
// List's, and the up_pack keeps them packed; no pack writes out an op or
// a media type that has a code.
func TestLinksThroughTheCatalog(t *testing.T) {
	ctx := context.Background()
	c := openTemp(t)
	ev := event("s1", "c", "https://repo.example.org/bitstreams/1/content", resourcesync.Created, "a1")
	ev.Upstream.Modified = time.Date(2020, 5, 6, 7, 8, 9, 0, time.FixedZone("", 7200))
	n := ev.Length
	ev.Upstream.Length = &n
	ev.Upstream.Type = "application/pdf"
	ev.Upstream.Hash = resourcesync.Hashes{{Alg: "md5", Value: ev.MD5}, {Alg: "sha-256", Value: ev.SHA256}}
	ev.Upstream.Links = oddLinks(&linkBase{uri: ev.URI, modified: ev.Upstream.Modified, hash: ev.Upstream.Hash,
		length: ev.Upstream.Length, typ: ev.Upstream.Type})
	mustApply(t, c, 1, ev)
	want := ev.Upstream.Links

	r, err := c.Resource(ctx, "c", ev.URI)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.Upstream.Links, want) {
		t.Errorf("Resource: links\n%+v\nwant\n%+v", r.Upstream.Links, want)
	}
	var scanned []resourcesync.Link
	if err := c.ScanResources(ctx, "c", "", 0, func(rs *ResourceState) error {
		scanned = rs.Upstream.Links
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(scanned, want) {
		t.Errorf("ScanResources: links\n%+v\nwant\n%+v", scanned, want)
	}
	var logged []resourcesync.Link
	if err := c.ScanChanges(ctx, "c", time.Time{}, time.Time{}, func(ch *LoggedChange) error {
		logged = ch.Upstream.Links
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(logged, want) {
		t.Errorf("ScanChanges: links\n%+v\nwant\n%+v", logged, want)
	}
	var up, cp, lp string
	if err := c.reader.QueryRowContext(ctx, `SELECT CAST(up_pack AS TEXT), CAST(copy_pack AS TEXT), CAST(pack AS TEXT)
		FROM resources, changes`).Scan(&up, &cp, &lp); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(up, `"h":`) || !strings.Contains(up, "items/1/metadata.xml") || strings.Contains(up, "https://repo.example.org/items") {
		t.Errorf("up_pack keeps its links as %q, not packed against the URI", up)
	}
	// The op and the media types have codes (codes.go).
	for _, pack := range []string{up, cp, lp} {
		if strings.Contains(pack, "created") || strings.Contains(pack, "application/") || strings.Contains(pack, "text/plain") {
			t.Errorf("a pack keeps an op or a media type written out: %q", pack)
		}
	}
}

// FuzzPackedLinks: links built from any bytes read back as they were
// packed, and any bytes read as links either decode or fail as a corrupt
// pack, never panic.
func FuzzPackedLinks(f *testing.F) {
	base := testBase()
	f.Add("via", "https://repo.example.org/x", "gzip", int64(3), 2, true, packLinks(oddLinks(base), base))
	f.Add("", "", "", int64(0), 0, false, "\x01\x01\x00\x01\x00")
	f.Add("\x00", "\x05", "\x00\x02", int64(-1), 0, false, "\x01\x01\x00\x20\x01\x02")
	f.Fuzz(func(t *testing.T, rel, href, enc string, length int64, pri int, same bool, raw string) {
		l := resourcesync.Link{Rel: rel, Href: href, Encoding: enc, Pri: pri, Length: &length}
		if same {
			l.Modified, l.Hash, l.Type = base.modified, base.hash, base.typ
		}
		in := []resourcesync.Link{l, {Rel: enc, Href: rel, Type: enc}}
		out, err := unpackLinks(packLinks(in, base), base)
		if err != nil || !reflect.DeepEqual(in, out) {
			t.Fatalf("read back as %+v, %v; want %+v", out, err, in)
		}
		if _, err := unpackLinks(raw, base); err != nil && !errors.Is(err, errPack) && raw[0] != '[' {
			t.Fatalf("%q: %v", raw, err)
		}
	})
}
