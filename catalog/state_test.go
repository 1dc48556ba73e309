package catalog

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCursorsSourcesValues(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "catalog.db")
	c, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := c.Cursor(ctx, "s1", "until"); err != nil || v != "" {
		t.Fatalf("unset cursor = %q, %v", v, err)
	}
	for _, v := range []string{"2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"} {
		if err := c.SetCursor(ctx, "s1", "until", v); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.SetCursor(ctx, "s2", "until", "other"); err != nil {
		t.Fatal(err)
	}
	added := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := c.UpsertSource(ctx, Source{Name: "s1", BaseURI: "http://s1/", Collection: "c", Added: added}); err != nil {
		t.Fatal(err)
	}
	moved := Source{Name: "s1", BaseURI: "http://s1.example/", Collection: "c", Added: added.Add(time.Hour), Removed: added.Add(48 * time.Hour)}
	if err := c.UpsertSource(ctx, moved); err != nil {
		t.Fatal(err)
	}
	if err := c.SetValue(ctx, "republish/x", []byte("state")); err != nil {
		t.Fatal(err)
	}
	if err := c.SetValue(ctx, "republish/gone", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteValue(ctx, "republish/gone"); err != nil {
		t.Fatal(err)
	}
	c.Close()

	// All of it survives a reopen.
	c = openAt(t, path)
	if v, err := c.Cursor(ctx, "s1", "until"); err != nil || v != "2026-01-02T00:00:00Z" {
		t.Fatalf("cursor after reopen = %q, %v", v, err)
	}
	srcs, err := c.Sources(ctx)
	if err != nil || len(srcs) != 1 {
		t.Fatalf("Sources = %+v, %v", srcs, err)
	}
	if s := srcs[0]; s.BaseURI != "http://s1.example/" || !s.Added.Equal(added) || !s.Removed.Equal(moved.Removed) {
		t.Fatalf("source = %+v: want the new base URI and removal, the first added time", s)
	}
	if v, err := c.Value(ctx, "republish/x"); err != nil || string(v) != "state" {
		t.Fatalf("Value = %q, %v", v, err)
	}
	if _, err := c.Value(ctx, "republish/gone"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted value: %v, want ErrNotFound", err)
	}
}

func TestSchemaVersion(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "catalog.db")
	c := openAt(t, path)
	var v int
	if err := c.reader.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil || v != schemaVersion() {
		t.Fatalf("user_version = %d, %v; want %d", v, err, schemaVersion())
	}
	var mode string
	if err := c.writer.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q, %v", mode, err)
	}
	c.Close()

	// A file written by a newer build is refused, not misread.
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if c, err := Open(ctx, path, nil); err == nil || !strings.Contains(err.Error(), "newer") {
		if c != nil {
			c.Close()
		}
		t.Fatalf("Open of a newer schema: %v, want a refusal", err)
	}
}

func TestMigrationsRunInOrderOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "catalog.db")
	c, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustApply(t, c, 1, event("s1", "c", "http://s1/a", cr, "a1"))
	c.Close()

	// A later build adds a step; the file moves up to it, keeping its data.
	saved := migrations
	t.Cleanup(func() { migrations = saved })
	migrations = append(append([]migration{}, saved...), migration{name: "test step",
		sql: `CREATE TABLE subscriptions (topic TEXT PRIMARY KEY); INSERT INTO subscriptions VALUES ('t')`})
	for range 2 { // the second open finds nothing to do
		c = openAt(t, path)
		var n, v int
		if err := c.reader.QueryRowContext(ctx, "SELECT count(*) FROM subscriptions").Scan(&n); err != nil || n != 1 {
			t.Fatalf("migrated table has %d rows, %v; want 1", n, err)
		}
		if err := c.reader.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil || v != len(saved)+1 {
			t.Fatalf("user_version = %d, %v", v, err)
		}
		if lastApplied(t, c) != 1 {
			t.Fatal("data lost across the migration")
		}
		c.Close()
	}
}
