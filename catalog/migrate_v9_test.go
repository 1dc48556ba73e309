package catalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// toV8 turns the closed catalog file at path back into schema version 8:
// the tables of resources and changes as the first eight steps leave them,
// each fact in its plain column, from the packs of schema 9. The packs
// of schema 8 are left NULL, so that the migration shows it rebuilds
// them from the plain columns.
func toV8(t testing.TB, path string) {
	t.Helper()
	toV10(t, path)
	ctx := context.Background()
	ddl := v8Tables(t)
	db, err := sql.Open("sqlite3", dsn(path, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	must := func(q string, args ...any) {
		t.Helper()
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	must(`ALTER TABLE resources RENAME TO resources_new`)
	must(`ALTER TABLE changes RENAME TO changes_new`)
	for _, q := range []string{"DROP INDEX resources_md5", "DROP INDEX resources_held", "DROP INDEX resources_origin",
		"DROP INDEX changes_collection_seq"} {
		must(q)
	}
	for _, q := range ddl {
		must(q)
	}
	type resRow struct {
		coll, uri, source, sha256, md5, typ, upOrder, up string
		deleted, length, changed, seq, est, estRefs      int64
		hops                                             sql.NullString
		copyPack                                         []byte
	}
	var res []resRow
	rows, err := tx.QueryContext(ctx, `SELECT collection, uri, source, sha256, md5, type, up_order, up_pack, deleted, length,
		changed, seq, est, est_refs, hops, `+digestsSQL("")+` || copy_pack FROM resources_new`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var r resRow
		if err := rows.Scan(&r.coll, &r.uri, &r.source, &r.sha256, &r.md5, &r.typ, &r.upOrder, &r.up, &r.deleted, &r.length,
			&r.changed, &r.seq, &r.est, &r.estRefs, &r.hops, &r.copyPack); err != nil {
			t.Fatal(err)
		}
		res = append(res, r)
	}
	rows.Close()
	for _, r := range res {
		var source, origin string
		var up Upstream
		if err := decodeUp(r.up, r.uri, r.sha256, r.md5, r.typ, &source, &origin, &up); err != nil {
			t.Fatal(err)
		}
		hops := r.hops.String
		if !r.hops.Valid {
			if hops, err = hopsOf(r.uri, r.up, r.sha256, r.md5, r.typ); err != nil {
				t.Fatal(err)
			}
		}
		must(`INSERT INTO resources (collection, uri, source, deleted, sha256, md5, length, type, changed, seq, origin,
			up_time, up_modified, up_hash, up_length, up_type, links, hops, copy_pack, est, est_refs, up_order)
			VALUES (`+placeholders(22, 1)+`)`, r.coll, r.uri, r.source, r.deleted, r.sha256, r.md5, r.length, r.typ,
			r.changed, r.seq, origin, formatTime(up.Time), formatTime(up.Modified), up.Hash.String(), v8Length(up.Length),
			up.Type, v8Links(t, up.Links), hops, r.copyPack, r.est, r.estRefs, r.upOrder)
	}
	type chRow struct {
		coll, row string
		prev      int64
	}
	var chs []chRow
	rows, err = tx.QueryContext(ctx, `SELECT collection, CAST(`+digestsSQL("")+` || pack || uri AS TEXT), prev FROM changes_new`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c chRow
		if err := rows.Scan(&c.coll, &c.row, &c.prev); err != nil {
			t.Fatal(err)
		}
		chs = append(chs, c)
	}
	rows.Close()
	for _, c := range chs {
		var d packDecoder
		var ch LoggedChange
		if err := d.logged(c.row, &ch); err != nil {
			t.Fatal(err)
		}
		up := &ch.Upstream
		must(`INSERT INTO changes (seq, collection, uri, op, at, received, sha256, md5, length, type, source, up_op,
			up_time, up_modified, up_hash, up_length, up_type, links, prev) VALUES (`+placeholders(19, 1)+`)`,
			int64(ch.Seq), c.coll, ch.URI, ch.Op, ch.At.UnixMicro(), ch.Received.UnixMicro(), ch.SHA256, ch.MD5, ch.Length, ch.Type,
			ch.Source, ch.UpstreamOp, formatTime(up.Time), formatTime(up.Modified), up.Hash.String(), v8Length(up.Length),
			up.Type, v8Links(t, up.Links), c.prev)
	}
	must(`DROP TABLE resources_new`)
	must(`DROP TABLE changes_new`)
	must(`PRAGMA user_version = 8`)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// v8Tables is the SQL of the tables resources and changes and of their
// indexes as the first eight steps of migrations leave them.
func v8Tables(t testing.TB) []string {
	t.Helper()
	db, err := sql.Open("sqlite3", dsn(filepath.Join(t.TempDir(), "v8.db"), ""))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, m := range migrations[:8] {
		if _, err := db.Exec(m.sql); err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
	}
	rows, err := db.Query(`SELECT sql FROM sqlite_schema WHERE tbl_name IN ('resources', 'changes') AND sql IS NOT NULL
		ORDER BY type DESC`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var q string
		if err := rows.Scan(&q); err != nil {
			t.Fatal(err)
		}
		out = append(out, q)
	}
	return out
}

func v8Length(n *int64) sql.NullInt64 {
	if n == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: *n, Valid: true}
}

// v8Links is the links column of schema 8: the JSON of the links.
func v8Links(t testing.TB, links []resourcesync.Link) sql.NullString {
	if len(links) == 0 {
		return sql.NullString{}
	}
	b, err := json.Marshal(links)
	if err != nil {
		t.Fatal(err)
	}
	return sql.NullString{String: string(b), Valid: true}
}

// catalogFacts is everything the catalog's reads say of a fixture.
type catalogFacts struct {
	Listed     []ResourceState
	Changes    []LoggedChange
	Records    []ChangeRecord
	Rows       map[string]*Resource
	Lookups    map[string]Lookup
	Provenance map[string][]Hop
	ByURI      map[string][]*ResourceState
	ByOrigin   map[string]*ResourceState
	Applied    uint64
}

// readFacts reads every fact of the fixture's URIs through the
// catalog's reads.
func readFacts(t *testing.T, c *Catalog, uris, origins []string) catalogFacts {
	t.Helper()
	ctx := context.Background()
	f := catalogFacts{Rows: map[string]*Resource{}, Lookups: map[string]Lookup{}, Provenance: map[string][]Hop{},
		ByURI: map[string][]*ResourceState{}, ByOrigin: map[string]*ResourceState{}, Applied: lastApplied(t, c)}
	err := c.ScanResources(ctx, "c", "", 0, func(rs *ResourceState) error {
		cp := *rs
		cp.Upstream.Hash = append(resourcesync.Hashes(nil), rs.Upstream.Hash...)
		if rs.Upstream.Length != nil {
			n := *rs.Upstream.Length
			cp.Upstream.Length = &n
		}
		f.Listed = append(f.Listed, cp)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = c.ScanChanges(ctx, "c", time.Time{}, time.Time{}, func(ch *LoggedChange) error {
		cp := *ch
		cp.Upstream.Hash = append(resourcesync.Hashes(nil), ch.Upstream.Hash...)
		if ch.Upstream.Length != nil {
			n := *ch.Upstream.Length
			cp.Upstream.Length = &n
		}
		f.Changes = append(f.Changes, cp)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range changes(t, c, "c") {
		f.Records = append(f.Records, *ch)
	}
	for _, uri := range uris {
		if r, err := c.Resource(ctx, "c", uri); err == nil {
			f.Rows[uri] = r
		}
		if l, ok, err := c.Lookup(ctx, "c", uri); err == nil && ok {
			f.Lookups[uri] = l
		}
		if hops, err := c.Provenance(ctx, uri); err == nil {
			f.Provenance[uri] = hops
		}
		rs, err := c.ResourcesByURI(ctx, uri)
		if err != nil {
			t.Fatal(err)
		}
		f.ByURI[uri] = rs
	}
	for _, o := range origins {
		if rs, err := c.ResourceByOrigin(ctx, "c", o); err == nil {
			f.ByOrigin[o] = rs
		}
	}
	return f
}

// migrateAgain closes c, turns its file at path back into an older
// schema with down, and opens it again, which migrates it; it fails t
// unless every read then answers as before (readFacts), and returns the
// catalog opened again.
func migrateAgain(t *testing.T, c *Catalog, path string, down func(testing.TB, string), uris, origins []string, before catalogFacts) *Catalog {
	t.Helper()
	c.Close()
	down(t, path)
	c = openAt(t, path)
	if after := readFacts(t, c, uris, origins); !reflect.DeepEqual(before, after) {
		t.Errorf("after the migration the catalog reads\n%+v\nbefore it\n%+v", after, before)
	}
	return c
}

// TestMigrationV9KeepsEveryFact writes a catalog of every kind of row
// (a resource with links and a via link, one with odd times and no
// length, updated then deleted, restated, a tombstone, one whose upstream
// URI is not its own), turns it back into schema 8, opens it again and
// checks that every read answers as before the round trip, and that the
// rows now keep their hops only where they cannot be derived.
func TestMigrationV9KeepsEveryFact(t *testing.T) {
	ctx := context.Background()
	path := packFixture(t)
	c := openAt(t, path)
	odd := event("s1", "c", "http://s1/odd", resourcesync.Created, "odd")
	odd.Upstream.URI = "http://s1/odd?listed-as"
	odd.Upstream.Modified = time.Date(2001, 2, 3, 4, 5, 6, 7, time.FixedZone("", -3600))
	tomb := event("s1", "c", "http://s1/never-held", resourcesync.Deleted, "")
	for i, ev := range []*viaduct.Event{odd, tomb} {
		if err := c.Apply(ctx, uint64(10+i), t0.Add(time.Minute+time.Duration(i)*time.Second), ev); err != nil {
			t.Fatal(err)
		}
	}
	uris := []string{"http://s1/a", "http://s1/b", "http://s1/odd", "http://s1/never-held", "http://origin/a & b"}
	origins := []string{"http://origin/a & b", "http://s1/b", "http://s1/odd?listed-as"}
	before := readFacts(t, c, uris, origins)
	if len(before.Listed) != 2 || len(before.Changes) != 5 || len(before.Provenance) != 4 {
		t.Fatalf("fixture: %d listed, %d changes, %d provenances; want 2, 5, 4", len(before.Listed), len(before.Changes),
			len(before.Provenance))
	}
	c = migrateAgain(t, c, path, toV8, uris, origins, before)
	var v, held, derived int
	if err := c.reader.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil || v != schemaVersion() {
		t.Fatalf("user_version = %d, %v; want %d", v, err, schemaVersion())
	}
	err := c.reader.QueryRowContext(ctx, `SELECT count(hops), count(*) - count(hops) FROM resources`).Scan(&held, &derived)
	if err != nil {
		t.Fatal(err)
	}
	// The resource whose upstream URI is not its own keeps its hops;
	// the others derive theirs.
	if held != 1 || derived != 3 {
		t.Errorf("%d rows keep their hops and %d derive them; want 1 and 3", held, derived)
	}
}

// BenchmarkMigrateV9 measures the migration from schema 8 of a catalog
// of b.N resources of a repository (repoEvents), each with its creation
// in the change log: the time Open takes on the file of schema 8, the
// step to 9 and those after it.
//
//	go test -run '^$' -bench MigrateV9 -benchtime 100000x ./catalog
func BenchmarkMigrateV9(b *testing.B) { benchMigrate(b, toV8) }

// benchMigrate measures Open on a catalog of b.N resources of a
// repository (repoEvents), each with its creation in the change log,
// after back has turned the file back to an earlier schema: every step
// from there to the current one. It reports the file's bytes and the
// WAL's as the steps left it, per resource.
func benchMigrate(b *testing.B, back func(testing.TB, string)) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "catalog.db")
	c := openAt(b, path)
	evs := repoEvents(b.N)
	for i := 0; i < len(evs); i += 2500 {
		if err := c.ApplyBatch(ctx, evs[i:min(i+2500, len(evs))]); err != nil {
			b.Fatal(err)
		}
	}
	c.Close()
	back(b, path)
	b.ResetTimer()
	c, err := Open(ctx, path, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	defer c.Close()
	if n, _, err := c.CountResources(ctx, "repo"); err != nil || n != b.N {
		b.Fatalf("after the migration the catalog holds %d resources (%v), want %d", n, err, b.N)
	}
	b.ReportMetric(b.Elapsed().Seconds()*1e6/float64(b.N), "s/million-resources")
	// The WAL as the step left it: what it needs of the disk beside the
	// file while it runs.
	for name, p := range map[string]string{"file": path, "wal": path + "-wal"} {
		if st, err := os.Stat(p); err == nil {
			b.ReportMetric(float64(st.Size())/float64(b.N), name+"-B/resource")
		}
	}
}
