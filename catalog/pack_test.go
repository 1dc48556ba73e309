package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// dropV3 turns a catalog file back into schema version 2 (dropping v4's
// column first).
func dropV3(t *testing.T, db *sql.DB) {
	t.Helper()
	for _, q := range []string{
		"ALTER TABLE changes DROP COLUMN prev", // schema v5
		"ALTER TABLE collections DROP COLUMN horizon",
		"ALTER TABLE collections DROP COLUMN horizon_seq",
		"ALTER TABLE resources DROP COLUMN up_order", // schema v4
		"DROP INDEX resources_held",
		"ALTER TABLE resources DROP COLUMN copy_pack",
		"ALTER TABLE resources DROP COLUMN up_pack",
		"ALTER TABLE resources DROP COLUMN est",
		"ALTER TABLE resources DROP COLUMN est_refs",
		"ALTER TABLE changes DROP COLUMN pack",
		"PRAGMA user_version = 2",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// packFixture applies a created resource with links and odd times, one
// updated and then deleted, one whose Source restated its metadata only,
// and returns the catalog's path.
func packFixture(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "catalog.db")
	c, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := event("s1", "c", "http://s1/a", resourcesync.Created, "one")
	a.Upstream.Time = time.Date(1999, 12, 31, 23, 59, 59, 123456789, time.FixedZone("", 5*3600+1800))
	a.Upstream.Links = []resourcesync.Link{{Rel: "via", Href: "http://origin/a & b", Modified: t0, Pri: 2},
		{Rel: "describedby", Href: "http://s1/a.meta", Type: "application/xml"}}
	b := event("s1", "c", "http://s1/b", resourcesync.Created, "two")
	b.Upstream.Length = nil
	b2 := event("s1", "c", "http://s1/b", resourcesync.Updated, "three")
	b3 := event("s1", "c", "http://s1/b", resourcesync.Deleted, "")
	a2 := *a
	a2.Upstream.Type = "text/restated"
	for i, ev := range []*viaduct.Event{a, b, b2, b3, &a2} {
		if err := c.Apply(ctx, uint64(i+1), t0.Add(time.Duration(i)*time.Second), ev); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	return path
}

// TestPacksMatchColumns checks that the packed reads return what the
// plain columns hold, for rows written by every path of the applier.
func TestPacksMatchColumns(t *testing.T) {
	c := openAt(t, packFixture(t))
	checkPacks(t, c)
}

// TestMigrationPacksRows opens a catalog of schema version 2 and checks
// that the migration packs its rows as the applier would have.
func TestMigrationPacksRows(t *testing.T) {
	path := packFixture(t)
	toV8(t, path)
	db, err := sql.Open("sqlite3", dsn(path, ""))
	if err != nil {
		t.Fatal(err)
	}
	dropV3(t, db)
	db.Close()
	c := openAt(t, path)
	checkPacks(t, c)
	var n int
	if err := c.reader.QueryRow(`SELECT count(*) FROM resources WHERE est = 0 OR est_refs = 0`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d resources without a size hint (%v)", n, err)
	}
}

// checkPacks compares ScanResources and ScanChanges with the plain
// columns read by the package's other reads.
func checkPacks(t *testing.T, c *Catalog) {
	t.Helper()
	ctx := context.Background()
	var got []ResourceState
	err := c.ScanResources(ctx, "c", "", 0, func(rs *ResourceState) error {
		got = append(got, *rs)
		got[len(got)-1].Upstream.Hash = append(resourcesync.Hashes(nil), rs.Upstream.Hash...)
		if rs.Upstream.Length != nil {
			n := *rs.Upstream.Length
			got[len(got)-1].Upstream.Length = &n
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("%d resources held, want 1", len(got))
	}
	want, err := c.ResourceByOrigin(ctx, "c", "http://origin/a & b")
	if err != nil {
		t.Fatal(err)
	}
	if !sameState(&got[0], want) {
		t.Errorf("packed resource\n%+v\nplain columns\n%+v", got[0], *want)
	}
	if got[0].Upstream.Type != "text/restated" || got[0].Op != resourcesync.Created {
		t.Errorf("packed resource: type %q, op %q", got[0].Upstream.Type, got[0].Op)
	}
	// The copy each change names is in plain columns too (Changes reads
	// them); what the Source said of it is in its pack only.
	plain := changes(t, c, "c")
	n := 0
	err = c.ScanChanges(ctx, "c", time.Time{}, time.Time{}, func(ch *LoggedChange) error {
		if n >= len(plain) || !reflect.DeepEqual(ch.ChangeRecord, *plain[n]) {
			t.Errorf("packed change\n%+v\nplain columns\n%+v", ch.ChangeRecord, plain[min(n, len(plain)-1)])
		}
		if ch.Source != "s1" || ch.UpstreamOp == "" || ch.Upstream.Time.IsZero() {
			t.Errorf("packed change %d: source %q, upstream op %q, time %s", ch.Seq, ch.Source, ch.UpstreamOp, ch.Upstream.Time)
		}
		n++
		return nil
	})
	if err != nil || n != 4 || len(plain) != 4 {
		t.Fatalf("ScanChanges: %d changes, Changes: %d, %v", n, len(plain), err)
	}
}

func sameState(a, b *ResourceState) bool {
	return a.Op == b.Op && a.Collection == b.Collection && a.URI == b.URI && a.Source == b.Source && a.Origin == b.Origin &&
		a.Deleted == b.Deleted && a.SHA256 == b.SHA256 && a.MD5 == b.MD5 && a.Length == b.Length && a.Type == b.Type &&
		a.Changed.Equal(b.Changed) && a.Seq == b.Seq && sameUpstream(&a.Upstream, &b.Upstream)
}

func sameUpstream(a, b *Upstream) bool {
	_, ao := a.Time.Zone()
	_, bo := b.Time.Zone()
	return a.Time.Equal(b.Time) && ao == bo && a.Modified.Equal(b.Modified) && a.Hash.String() == b.Hash.String() &&
		reflect.DeepEqual(a.Length, b.Length) && a.Type == b.Type && reflect.DeepEqual(a.Links, b.Links)
}

// BenchmarkPackState decodes the packed row of a typical harvested
// resource (two hashes, upstream times and length), as ScanResources
// does for every row of a Resource List; neighbouring rows differ in
// their URI and hashes, as a baseline's do. A repository's row has a
// describedby link; rows before schema 14 keep it as JSON, and their ops
// and types written out:
//
//	go test -run '^$' -bench PackState ./catalog
func BenchmarkPackState(b *testing.B) {
	b.Run("no links", func(b *testing.B) { benchPackState(b, "") })
	b.Run("describedby", func(b *testing.B) { benchPackState(b, "packed") })
	b.Run("describedby before schema 14", func(b *testing.B) { benchPackState(b, "json") })
}

func benchPackState(b *testing.B, links string) {
	const rows = 64
	var packed [rows]string
	for i := range rows {
		p := packer{codes: links != "json"}
		c := copyFacts{sha256: sha(fmt.Sprint(i)), md5: sha(fmt.Sprint(i))[:32], typ: "text/html", op: resourcesync.Created,
			length: 1234, changed: t0.UnixMicro() + int64(i)*1000, seq: int64(i + 1)}
		p.packCopyV9(&c)
		uri := fmt.Sprintf("http://origin.example.com/records/%08d.html", i)
		up := upFacts{source: "origin", origin: uri, time: t0.Add(-time.Hour), modified: t0.Add(-time.Hour),
			hash: "md5:" + sha(fmt.Sprint(i))[:32], length: sql.NullInt64{Int64: 1234, Valid: true}, typ: "text/html"}
		ln := []resourcesync.Link{{Rel: "describedby", Href: fmt.Sprintf("http://origin.example.com/items/%08d.xml", i),
			Type: "application/xml"}}
		switch links {
		case "packed":
			up.links = packLinks(ln, &linkBase{uri: uri})
		case "json":
			var err error
			if up.links, err = encodeLinks(ln); err != nil {
				b.Fatal(err)
			}
		}
		p.packUp(&up, uri, &c)
		packed[i] = string(p.b) + uri
	}
	var (
		d  packDecoder
		rs ResourceState
	)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := d.state(packed[i%rows], &rs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "entries/s")
}

// TestPackTruncated checks that a row cut short anywhere in its packs
// decodes to an error, never to a record or a panic, and that the whole
// row decodes to what was packed.
func TestPackTruncated(t *testing.T) {
	var p packer
	c := copyFacts{sha256: sha("x"), md5: "cd", typ: "text/html", op: resourcesync.Updated, length: 300, changed: t0.UnixMicro(), seq: 70000}
	p.packCopyV9(&c)
	p.packUp(&upFacts{source: "s1", origin: "http://o/a", time: t0, modified: t0.In(time.FixedZone("", 3600)), hash: "md5:cd sha-256:ef",
		length: sql.NullInt64{Int64: 300, Valid: true}, typ: "text/html", links: `[{"r":"via","h":"http://o/a"}]`}, "http://s1/a", &c)
	packs := string(p.b)
	var d packDecoder
	var rs ResourceState
	for n := range len(packs) {
		if err := d.state(packs[:n], &rs); err == nil {
			t.Errorf("state(first %d of %d bytes) = nil error", n, len(packs))
		}
	}
	if err := d.state(packs+"http://s1/a", &rs); err != nil {
		t.Fatal(err)
	}
	if rs.URI != "http://s1/a" || rs.Origin != "http://o/a" || rs.SHA256 != sha("x") || rs.Seq != 70000 || rs.Op != resourcesync.Updated || !rs.Upstream.Modified.Equal(t0) ||
		rs.Upstream.Modified.Location().String() == "UTC" || *rs.Upstream.Length != 300 || len(rs.Upstream.Hash) != 2 || rs.Upstream.Links[0].Href != "http://o/a" {
		t.Errorf("state = %+v", rs)
	}
	var ch LoggedChange
	var q packer
	q.digests(sha("x"), "cd")
	q.packChange(&changeHead{seq: 5, at: t0.UnixMicro(), received: t0.UnixMicro(), op: resourcesync.Created, upOp: resourcesync.Updated,
		copy: copyFacts{sha256: sha("x"), md5: "cd", typ: "text/html", length: 300}}, &upFacts{source: "s1", origin: "http://o/a", time: t0, modified: t0, typ: "text/html"}, true)
	for n := range len(q.b) {
		if err := d.logged(string(q.b[:n]), &ch); err == nil {
			t.Errorf("logged(first %d of %d bytes) = nil error", n, len(q.b))
		}
	}
	if err := d.logged(string(q.b)+"http://s1/a", &ch); err != nil || ch.Seq != 5 || ch.URI != "http://s1/a" || ch.UpstreamOp != resourcesync.Updated {
		t.Errorf("logged = %+v, %v", ch, err)
	}
}

// TestPackMarks: the Source's hash and type are kept as a mark where they
// repeat the row's copy, and read back as the Source wrote them, in its
// order; anything else (another digest, the same digest in capitals, an
// algorithm the copy has not) is kept as written. A mark in a row with no
// copy to name is a corrupt row.
func TestPackMarks(t *testing.T) {
	md5, sh := sha("m")[:32], sha("s")
	c := copyFacts{sha256: sh, md5: md5, typ: "text/xml", op: resourcesync.Created, length: 9, changed: t0.UnixMicro(), seq: 3}
	for _, tc := range []struct {
		hash, typ string
		marked    bool
	}{
		{"md5:" + md5 + " sha-256:" + sh, "text/xml", true},
		{"sha-256:" + sh + " md5:" + md5, "text/xml", true},
		{"md5:" + md5, "", true},
		{"sha-256:" + sh, "text/html", true},
		{"md5:" + strings.ToUpper(md5), "text/xml", false},
		{"md5:" + md5 + " sha-1:" + sha("1")[:40], "text/xml", false},
		{"sha-256:" + sha("other"), "text/xml", false},
		{"", "", false},
	} {
		var p, literal packer
		p.packCopyV9(&c)
		literal.packCopyV9(&c)
		u := upFacts{source: "s", origin: "http://s/a", time: t0, hash: tc.hash, typ: tc.typ}
		p.packUp(&u, "http://s/a", &c)
		literal.packUp(&u, "http://s/a", nil)
		if got := hashMark(tc.hash, &c) != tc.hash; got != tc.marked {
			t.Errorf("hash %q: marked %v, want %v", tc.hash, got, tc.marked)
		}
		if tc.marked && len(p.b) > len(literal.b)-len(tc.hash)+1 {
			t.Errorf("hash %q: pack of %d bytes, %d written out", tc.hash, len(p.b), len(literal.b))
		}
		var d packDecoder
		var rs ResourceState
		if err := d.state(string(p.b)+"http://s/a", &rs); err != nil {
			t.Fatalf("hash %q: %v", tc.hash, err)
		}
		if got := rs.Upstream.Hash.String(); got != tc.hash || rs.Upstream.Type != tc.typ {
			t.Errorf("read back hash %q type %q, want %q %q", got, rs.Upstream.Type, tc.hash, tc.typ)
		}
		var q packer
		q.digests(c.sha256, c.md5)
		q.packChange(&changeHead{seq: 3, op: resourcesync.Created, copy: c}, &u, true)
		var ch LoggedChange
		if err := d.logged(string(q.b)+"http://s/a", &ch); err != nil {
			t.Fatal(err)
		}
		if got := ch.Upstream.Hash.String(); got != tc.hash || ch.Upstream.Type != tc.typ {
			t.Errorf("change: read back hash %q type %q, want %q %q", got, ch.Upstream.Type, tc.hash, tc.typ)
		}
	}
	// A tombstone's row has no copy: a mark there is corruption.
	var p packer
	p.packCopyV9(&copyFacts{op: resourcesync.Deleted})
	p.packUp(&upFacts{source: "s", hash: "md5:" + md5}, "http://s/a", &c)
	var d packDecoder
	var rs ResourceState
	if err := d.state(string(p.b)+"http://s/a", &rs); !errors.Is(err, errPack) {
		t.Errorf("a mark with no copy: %v, want errPack", err)
	}
}
