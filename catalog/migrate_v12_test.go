package catalog

import (
	"context"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// toV11 turns the closed catalog file at path back into schema 11: the
// digests as hex text, changes_md5 on their first 12 digits.
func toV11(t testing.TB, path string) {
	t.Helper()
	toV12(t, path)
	execOn(t, path, "DROP INDEX changes_md5",
		`UPDATE resources SET sha256 = `+digestSQL("sha256")+`, md5 = `+digestSQL("md5"),
		`UPDATE changes SET sha256 = `+digestSQL("sha256")+`, md5 = `+digestSQL("md5"),
		"CREATE INDEX changes_md5 ON changes (substr(md5, 1, 12)) WHERE op <> 'deleted'",
		"PRAGMA user_version = 11")
}

// TestMigrationV12KeepsDigestsAsBytes: a catalog of schema 11 keeps its
// hex digests as bytes after the step, a digest in another form as the
// text it is, and every read answers as before: the lists and change
// log, the lookups by URI, by origin and by hash, the provenance, the
// blob references and the copies of a blob.
func TestMigrationV12KeepsDigestsAsBytes(t *testing.T) {
	ctx := context.Background()
	path := packFixture(t)
	c := openAt(t, path)
	odd := event("s1", "c", "http://s1/odd", resourcesync.Created, "odd")
	odd.SHA256, odd.MD5 = "Not-Hex:"+odd.SHA256[:20], "ABCDEF" // not lowercase hex of whole bytes: kept as text
	tomb := event("s1", "c", "http://s1/never-held", resourcesync.Deleted, "")
	for i, ev := range []*viaduct.Event{odd, tomb} {
		if err := c.Apply(ctx, uint64(10+i), t0.Add(time.Minute+time.Duration(i)*time.Second), ev); err != nil {
			t.Fatal(err)
		}
	}
	uris := []string{"http://s1/a", "http://s1/b", "http://s1/odd", "http://s1/never-held", "http://origin/a & b"}
	origins := []string{"http://origin/a & b", "http://s1/b"}
	before := readFacts(t, c, uris, origins)
	refsBefore := blobRefs(t, c)
	a := before.Rows["http://s1/a"]
	if a == nil || len(a.SHA256) != 64 {
		t.Fatalf("fixture: resource a = %+v", a)
	}
	c = migrateAgain(t, c, path, toV11, uris, origins, before)
	if refs := blobRefs(t, c); !reflect.DeepEqual(refs, refsBefore) {
		t.Errorf("blob references after the migration: %q, before: %q", refs, refsBefore)
	}
	for _, q := range []struct{ sql, want string }{
		{`SELECT typeof(sha256) || ' ' || length(sha256) || ' ' || typeof(md5) || ' ' || length(md5) FROM resources WHERE uri = 'http://s1/a'`, "blob 32 blob 16"},
		{`SELECT typeof(sha256) || ' ' || typeof(md5) FROM changes WHERE uri = 'http://s1/a'`, "blob blob"},
		{`SELECT typeof(sha256) || ' ' || sha256 || ' ' || md5 FROM resources WHERE uri = 'http://s1/odd'`, "text " + odd.SHA256 + " ABCDEF"},
		{`SELECT typeof(sha256) || ' ' || quote(sha256) FROM resources WHERE uri = 'http://s1/never-held'`, "text ''"},
	} {
		var got string
		if err := c.reader.QueryRowContext(ctx, q.sql).Scan(&got); err != nil || got != q.want {
			t.Errorf("%s = %q, %v; want %q", q.sql, got, err, q.want)
		}
	}
	hs := resourcesync.Hashes{{Alg: resourcesync.MD5, Value: a.MD5}, {Alg: resourcesync.SHA256, Value: a.SHA256}}
	if r, err := c.HeldByHash(ctx, "s1", hs, nil); err != nil || r.URI != a.URI {
		t.Errorf("HeldByHash(%s) = %v, %v; want %s", a.MD5, r, err, a.URI)
	}
	if rs, err := c.CopiesOf(ctx, []string{"s1"}, a.SHA256, a.MD5); err != nil || len(rs) != 1 || rs[0].URI != a.URI {
		t.Errorf("CopiesOf(%s) = %v, %v; want %s", a.SHA256, rs, err, a.URI)
	}
	if rs, err := c.CopiesOf(ctx, []string{"s1"}, odd.SHA256, odd.MD5); err != nil || len(rs) != 1 || rs[0].URI != odd.URI {
		t.Errorf("CopiesOf digests kept as text = %v, %v; want %s", rs, err, odd.URI)
	}
	checkByMD5Plan(t, c, `SELECT `+qualified(resourceCols)+byMD5From+` AND r.sha256 = ?3`,
		append(md5ArgList(a.MD5), digestValue(a.SHA256))...)
}

// blobRefs is every blob key BlobRefs reports, sorted.
func blobRefs(t testing.TB, c *Catalog) []string {
	t.Helper()
	var refs []string
	if _, err := c.BlobRefs(context.Background(), func(s string) error { refs = append(refs, s); return nil }); err != nil {
		t.Fatal(err)
	}
	sort.Strings(refs)
	return refs
}

// BenchmarkMigrateV12 measures the step to schema 12 on a repository's
// baseline: every row's digests rewritten as bytes, the md5 index built
// again.
//
//	go test -run '^$' -bench MigrateV12 -benchtime 200000x ./catalog
func BenchmarkMigrateV12(b *testing.B) { benchMigrate(b, toV11) }
