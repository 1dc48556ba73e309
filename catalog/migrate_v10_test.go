package catalog

import (
	"context"
	"database/sql"
	"reflect"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// packsOf reads every resource's packs and every change's pack.
func packsOf(t testing.TB, db interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, q := range []string{`SELECT 'resource ' || collection || ' ' || uri, copy_pack || up_pack FROM resources`,
		`SELECT 'change ' || seq, pack FROM changes`} {
		rows, err := db.QueryContext(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var k, v string
			if err := rows.Scan(&k, &v); err != nil {
				t.Fatal(err)
			}
			out[k] = v
		}
		rows.Close()
	}
	return out
}

// asStep13 is every pack of db (keyed as packsOf keys them) in the forms
// the applier of schemas 10 to 13 wrote, which the migrations write:
// ops and media types written out, links as JSON (schemaV14).
func asStep13(t testing.TB, db interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, r := range step13Rows(t, db) {
		out[r.key] = string(r.copy) + string(r.up) + string(r.pack)
	}
	return out
}

// writeStep13 writes every row of c back in the forms of schemas 10 to
// 13 (step13Rows), in one transaction.
func writeStep13(t testing.TB, c *Catalog) {
	t.Helper()
	ctx := context.Background()
	rows := step13Rows(t, c.reader)
	err := c.write(ctx, func(tx *sql.Tx) error {
		for _, r := range rows {
			var err error
			if r.pack == nil {
				_, err = tx.ExecContext(ctx, `UPDATE resources SET copy_pack = ?, up_pack = ? WHERE collection = ? AND uri = ?`,
					r.copy, r.up, r.coll, r.uri)
			} else {
				_, err = tx.ExecContext(ctx, `UPDATE changes SET pack = ? WHERE seq = ?`, r.pack, r.seq)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// step13Row is a row's packs as schemas 10 to 13 wrote them: a
// resource's copy and up, or a change's pack.
type step13Row struct {
	key, coll, uri string
	seq            int64
	copy, up, pack []byte
}

// step13Rows reads each row of db through the package's decoder and
// packs it again in the forms of schemas 10 to 13.
func step13Rows(t testing.TB, db interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) []step13Row {
	t.Helper()
	var out []step13Row
	var d packDecoder
	for _, q := range []string{
		`SELECT 'resource ' || collection || ' ' || uri, collection, 0, CAST(` + digestsSQL("") + ` || copy_pack || up_pack || uri AS TEXT) FROM resources`,
		`SELECT 'change ' || seq, collection, seq, CAST(` + digestsSQL("") + ` || pack || uri AS TEXT) FROM changes`} {
		rows, err := db.QueryContext(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var r step13Row
			var row string
			if err := rows.Scan(&r.key, &r.coll, &r.seq, &row); err != nil {
				t.Fatal(err)
			}
			var p packer
			if r.seq == 0 {
				var rs ResourceState
				if err := d.state(row, &rs); err != nil {
					t.Fatalf("%s: %v", r.key, err)
				}
				c := copyFacts{sha256: rs.SHA256, md5: rs.MD5, typ: rs.Type, op: rs.Op, length: rs.Length,
					changed: rs.Changed.UnixMicro(), seq: int64(rs.Seq)}
				up, err := upFactsOf(rs.Source, rs.Origin, &rs.Upstream)
				if err != nil {
					t.Fatal(err)
				}
				p.packCopy(&c)
				r.copy = append([]byte(nil), p.b...)
				p.reset()
				p.packUp(&up, rs.URI, &c)
				r.up, r.uri = append([]byte(nil), p.b...), rs.URI
			} else {
				var ch LoggedChange
				if err := d.logged(row, &ch); err != nil {
					t.Fatalf("%s: %v", r.key, err)
				}
				up, err := upFactsOf(ch.Source, "", &ch.Upstream)
				if err != nil {
					t.Fatal(err)
				}
				p.packChange(&changeHead{seq: int64(ch.Seq), at: ch.At.UnixMicro(), received: ch.Received.UnixMicro(), op: ch.Op,
					upOp: ch.UpstreamOp, copy: copyFacts{sha256: ch.SHA256, md5: ch.MD5, typ: ch.Type, length: ch.Length}}, &up, true)
				r.pack, r.uri = append([]byte(nil), p.b...), ch.URI
			}
			out = append(out, r)
		}
		rows.Close()
	}
	return out
}

// toV9 turns the closed catalog file at path back into schema 9: every
// pack written out in full, as schema 9 wrote them.
func toV9(t testing.TB, path string) {
	t.Helper()
	toV10(t, path)
	ctx := context.Background()
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
	type row struct{ coll, packs string }
	read := func(q string) []row {
		rows, err := tx.QueryContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.coll, &r.packs); err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		return out
	}
	var (
		d    packDecoder
		p, q packer
	)
	for _, r := range read(`SELECT collection, ` + digestsSQL("") + ` || copy_pack || up_pack || uri FROM resources`) {
		var rs ResourceState
		if err := d.state(r.packs, &rs); err != nil {
			t.Fatal(err)
		}
		up, err := upFactsOf(rs.Source, rs.Origin, &rs.Upstream)
		if err != nil {
			t.Fatal(err)
		}
		q.reset()
		q.packCopyV9(&copyFacts{sha256: rs.SHA256, md5: rs.MD5, typ: rs.Type, op: rs.Op, length: rs.Length,
			changed: rs.Changed.UnixMicro(), seq: int64(rs.Seq)})
		p.reset()
		p.packUp(&up, rs.URI, nil)
		if _, err := tx.ExecContext(ctx, `UPDATE resources SET copy_pack = ?, up_pack = ? WHERE collection = ? AND uri = ?`,
			q.b, p.b, r.coll, rs.URI); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range read(`SELECT collection, CAST(` + digestsSQL("") + ` || pack || uri AS TEXT) FROM changes`) {
		var ch LoggedChange
		if err := d.logged(r.packs, &ch); err != nil {
			t.Fatal(err)
		}
		up, err := upFactsOf(ch.Source, "", &ch.Upstream)
		if err != nil {
			t.Fatal(err)
		}
		p.reset()
		p.packChangeV9(&changeHead{seq: int64(ch.Seq), at: ch.At.UnixMicro(), received: ch.Received.UnixMicro(), op: ch.Op, upOp: ch.UpstreamOp,
			copy: copyFacts{sha256: ch.SHA256, md5: ch.MD5, typ: ch.Type, length: ch.Length}}, &up)
		if _, err := tx.ExecContext(ctx, `UPDATE changes SET pack = ? WHERE seq = ?`, p.b, int64(ch.Seq)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tx.ExecContext(ctx, `PRAGMA user_version = 9`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestMigrationV10MarksAsTheApplierDoes: a catalog of every kind of row
// (as TestMigrationV9KeepsEveryFact's, with a Source declaring both
// digests in its own order, one declaring a digest the copy does not
// match, and one declaring the copy's type) written out in full as schema
// 9 did (the digests in the packs, nothing marked), then opened: every
// pack is the one the applier wrote up to schema 13, byte for byte (the
// applier's packs read and packed again in those forms, asStep13), every
// read answers as before, and every pack is shorter.
func TestMigrationV10MarksAsTheApplierDoes(t *testing.T) {
	ctx := context.Background()
	path := packFixture(t)
	c := openAt(t, path)
	both := event("s1", "c", "http://s1/both", resourcesync.Created, "both")
	both.Upstream.Hash = resourcesync.Hashes{{Alg: resourcesync.SHA256, Value: both.SHA256}, {Alg: resourcesync.MD5, Value: both.MD5}}
	both.Upstream.Type = both.Type
	other := event("s1", "c", "http://s1/other", resourcesync.Created, "other")
	other.Upstream.Hash = resourcesync.Hashes{{Alg: resourcesync.MD5, Value: "0123456789abcdef0123456789abcdef"}}
	tomb := event("s1", "c", "http://s1/never-held", resourcesync.Deleted, "")
	for i, ev := range []*viaduct.Event{both, other, tomb} {
		if err := c.Apply(ctx, uint64(10+i), t0.Add(time.Minute+time.Duration(i)*time.Second), ev); err != nil {
			t.Fatal(err)
		}
	}
	uris := []string{"http://s1/a", "http://s1/b", "http://s1/both", "http://s1/other", "http://s1/never-held", "http://origin/a & b"}
	origins := []string{"http://origin/a & b", "http://s1/b"}
	before := readFacts(t, c, uris, origins)
	applied := asStep13(t, c.reader)
	c.Close()

	toV9(t, path)
	db, err := sql.Open("sqlite3", dsn(path, ""))
	if err != nil {
		t.Fatal(err)
	}
	literal := packsOf(t, db)
	db.Close()
	c = openAt(t, path)
	if after := readFacts(t, c, uris, origins); !reflect.DeepEqual(before, after) {
		t.Errorf("after the migration the catalog reads\n%+v\nbefore it\n%+v", after, before)
	}
	migrated := packsOf(t, c.reader)
	if !reflect.DeepEqual(applied, migrated) {
		t.Errorf("migrated packs differ from the applier's:\n%q\n%q", migrated, applied)
	}
	shorter := 0
	for k, v := range migrated {
		if len(v) < len(literal[k]) {
			shorter++
		}
	}
	if shorter != len(migrated) {
		t.Errorf("%d packs of %d shorter than schema 9's", shorter, len(migrated))
	}
}

// BenchmarkMigrateV10 measures the migration from schema 9 of a catalog
// of b.N resources of a repository (repoEvents), each with its creation
// in the change log: the time Open takes on the file of schema 9, the
// step to 10 and those after it.
//
//	go test -run '^$' -bench MigrateV10 -benchtime 100000x ./catalog
func BenchmarkMigrateV10(b *testing.B) { benchMigrate(b, toV9) }
