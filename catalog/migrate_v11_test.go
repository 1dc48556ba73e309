package catalog

import (
	"context"
	"strings"
	"testing"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// toV10 turns the closed catalog file at path back into schema 10: the
// md5 index on the resources, none on the change log.
func toV10(t testing.TB, path string) {
	t.Helper()
	toV11(t, path)
	execOn(t, path, "DROP INDEX changes_md5", "CREATE INDEX resources_md5 ON resources (source, md5)", "PRAGMA user_version = 10")
}

// checkByMD5Plan fails t unless query, a lookup by md5 run with args,
// seeks changes_md5 and the resources' primary key: never a scan, nor a
// sort.
func checkByMD5Plan(t testing.TB, c *Catalog, query string, args ...any) {
	t.Helper()
	plan := queryPlan(t, c, query, args...)
	var byIndex, byKey bool
	for _, step := range plan {
		byIndex = byIndex || strings.Contains(step, "SEARCH changes USING INDEX changes_md5")
		byKey = byKey || strings.Contains(step, "SEARCH r USING PRIMARY KEY (collection=? AND uri=?)")
		if strings.HasPrefix(step, "SCAN") || strings.Contains(step, "TEMP B-TREE") {
			t.Errorf("plan = %q: it scans or sorts", plan)
		}
	}
	if !byIndex || !byKey {
		t.Errorf("plan = %q, want a search of changes_md5 and one of the resources' primary key", plan)
	}
}

// TestMigrationV11MovesTheMD5Index: a catalog of schema 10 loses the
// resources' md5 index for the change log's, and its copies are found by
// hash as before: by the lookups of the fetch workers and of the fixity
// audit, the current copy only, not one replaced or deleted, a resource
// created again with the same bytes once, and only the Sources asked for
// (the fixity audit's, a Source's after another's).
func TestMigrationV11MovesTheMD5Index(t *testing.T) {
	ctx := context.Background()
	path := packFixture(t)
	c := openAt(t, path)
	kept := event("s1", "c", "http://s1/kept", cr, "kept bytes")
	replaced := event("s1", "c", "http://s1/replaced", cr, "old bytes")
	gone := event("s1", "c", "http://s1/gone", cr, "gone bytes")
	mustApply(t, c, 101, kept)
	mustApply(t, c, 102, replaced)
	mustApply(t, c, 103, gone)
	mustApply(t, c, 104, event("s1", "c", "http://s1/replaced", upd, "new bytes"))
	mustApply(t, c, 105, event("s1", "c", "http://s1/gone", del, ""))
	again := event("s1", "c", "http://s1/again", cr, "again bytes")
	mustApply(t, c, 106, again)
	mustApply(t, c, 107, event("s1", "c", "http://s1/again", del, ""))
	mustApply(t, c, 108, event("s1", "c", "http://s1/again", cr, "again bytes"))
	other := event("s2", "a", "http://s2/same", cr, "kept bytes") // another Source's copy of kept's bytes
	mustApply(t, c, 109, other)
	c.Close()
	toV10(t, path)

	c = openAt(t, path)
	var indexes []string
	rows, err := c.reader.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'index' AND name LIKE '%md5%' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		indexes = append(indexes, name)
	}
	rows.Close()
	if strings.Join(indexes, ",") != "changes_md5" {
		t.Fatalf("md5 indexes after the migration: %q, want changes_md5 alone", indexes)
	}
	both := func(ev *viaduct.Event) resourcesync.Hashes {
		return resourcesync.Hashes{{Alg: "md5", Value: ev.MD5}, {Alg: "sha-256", Value: ev.SHA256}}
	}
	if r, err := c.HeldByHash(ctx, "s1", both(kept), nil); err != nil || r.URI != kept.URI {
		t.Errorf("HeldByHash of a held copy = %v, %v; want %s", r, err, kept.URI)
	}
	for _, ev := range []*viaduct.Event{replaced, gone} {
		md5Only := resourcesync.Hashes{{Alg: "md5", Value: ev.MD5}}
		if r, err := c.HeldByHash(ctx, "s1", md5Only, nil); err == nil {
			t.Errorf("HeldByHash of the copy %s no longer holds found %s", ev.URI, r.URI)
		}
		if rs, err := c.CopiesOf(ctx, []string{"s1"}, ev.SHA256, ev.MD5); err != nil || len(rs) != 0 {
			t.Errorf("CopiesOf the copy %s no longer holds = %d resources, %v; want none", ev.URI, len(rs), err)
		}
	}
	if r, err := c.HeldByHash(ctx, "s2", both(kept), nil); err != nil || r.URI != other.URI {
		t.Errorf("HeldByHash of s2's copy of the same bytes = %v, %v; want %s", r, err, other.URI)
	}
	rs, err := c.CopiesOf(ctx, []string{"s2", "s1"}, kept.SHA256, kept.MD5)
	if err != nil || len(rs) != 2 || rs[0].URI != kept.URI || rs[1].URI != other.URI {
		t.Errorf("CopiesOf the blob of two Sources = %v, %v; want %s then %s", rs, err, kept.URI, other.URI)
	}
	for _, ev := range []*viaduct.Event{kept, again} {
		rs, err := c.CopiesOf(ctx, []string{"s1"}, ev.SHA256, ev.MD5)
		if err != nil || len(rs) != 1 || rs[0].URI != ev.URI {
			t.Errorf("CopiesOf the copy of %s = %d resources, %v; want it once", ev.URI, len(rs), err)
		}
	}
	checkByMD5Plan(t, c, `SELECT `+qualified(resourceCols)+byMD5From+` AND r.sha256 = ?3`, append(md5ArgList(kept.MD5), digestValue(kept.SHA256))...)
}

// BenchmarkMigrateV11 measures the migration from schema 10 on a
// repository's baseline: the step to 11 (one index dropped, the other
// built from the change log), then the steps after it, as Open runs
// them (0.9 s per million for the step alone, when it was the last).
//
//	go test -run '^$' -bench MigrateV11 -benchtime 200000x ./catalog
func BenchmarkMigrateV11(b *testing.B) { benchMigrate(b, toV10) }
