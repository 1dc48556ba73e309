package catalog

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// t0 is the stream time of the first event in tests.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// openTemp opens a new catalog file in a test directory, closed at cleanup.
func openTemp(t testing.TB) *Catalog {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "catalog.db"))
}

// openAt opens the catalog at path, closed at cleanup.
func openAt(t testing.TB, path string) *Catalog {
	t.Helper()
	c, err := Open(context.Background(), path, nil)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// md5ArgList is md5Args as the first arguments of a query.
func md5ArgList(md5 string) []any {
	prefix, value := md5Args(md5)
	return []any{prefix, value}
}

// execOn runs stmts on the closed catalog file at path, on a plain
// connection: a test's way to put back what an older schema had.
func execOn(t testing.TB, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite3", dsn(path, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// upClock numbers the events tests build: each one is a later statement
// of its Source than the one built before it, as it would be when the
// Source's changes reach EVENTS in its own order.
var upClock atomic.Int64

// event builds an event whose copy is content; content "" for a delete.
// Its upstream time is an hour before t0 plus a microsecond for every
// event built before it.
func event(source, coll, uri, op, content string) *viaduct.Event {
	ev := &viaduct.Event{Source: source, Collection: coll, URI: uri, Op: op}
	if op != resourcesync.Deleted {
		s := sha256.Sum256([]byte(content))
		m := md5.Sum([]byte(content))
		ev.SHA256, ev.MD5 = hex.EncodeToString(s[:]), hex.EncodeToString(m[:])
		ev.Length, ev.Type = int64(len(content)), "text/plain"
		ev.Upstream.Hash = resourcesync.Hashes{{Alg: resourcesync.MD5, Value: ev.MD5}}
		n := ev.Length
		ev.Upstream.Length = &n
	}
	ev.Upstream.Source, ev.Upstream.Collection, ev.Upstream.URI, ev.Upstream.Op = source, coll, uri, op
	ev.Upstream.Time = t0.Add(-time.Hour + time.Duration(upClock.Add(1))*time.Microsecond)
	return ev
}

// sha is the hex sha-256 of content.
func sha(content string) string {
	s := sha256.Sum256([]byte(content))
	return hex.EncodeToString(s[:])
}

// mustApply applies one event at stream time t0 + seq seconds.
func mustApply(t testing.TB, c *Catalog, seq uint64, ev *viaduct.Event) {
	t.Helper()
	if err := c.Apply(context.Background(), seq, t0.Add(time.Duration(seq)*time.Second), ev); err != nil {
		t.Fatalf("Apply(%d): %v", seq, err)
	}
}

// changes reads the whole change log of a collection.
func changes(t testing.TB, c *Catalog, coll string) []*ChangeRecord {
	t.Helper()
	var out []*ChangeRecord
	err := c.Changes(context.Background(), coll, 0, 0, func(ch *ChangeRecord) error {
		out = append(out, ch)
		return nil
	})
	if err != nil {
		t.Fatalf("Changes(%s): %v", coll, err)
	}
	return out
}

// lastApplied reads LastApplied or fails.
func lastApplied(t testing.TB, c *Catalog) uint64 {
	t.Helper()
	n, err := c.LastApplied(context.Background())
	if err != nil {
		t.Fatalf("LastApplied: %v", err)
	}
	return n
}

// checkFor polls cond until it holds or the deadline passes.
func checkFor(t testing.TB, d time.Duration, cond func() bool, what string) {
	t.Helper()
	testutil.Eventually(t, d, what, cond)
}

// queryPlan is SQLite's EXPLAIN QUERY PLAN of query run with args on c's
// readers: the detail of each step, in order.
func queryPlan(t testing.TB, c *Catalog, query string, args ...any) []string {
	t.Helper()
	rows, err := c.reader.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan
}

// digestsSQL renders the digests of the row named by alias ("" for the
// table itself) in SQL as packedRow does in Go, each a packed string of
// its hex (a length byte: both are under 128 bytes), for tests that read
// a row's packs as one column.
func digestsSQL(alias string) string {
	if alias != "" {
		alias += "."
	}
	packed := func(col string) string {
		col = alias + col
		return `char(iif(typeof(` + col + `) = 'blob', 2 * length(` + col + `), length(CAST(` + col + ` AS BLOB)))) || ` + digestSQL(col)
	}
	return packed("sha256") + ` || ` + packed("md5")
}
