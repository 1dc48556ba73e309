package catalog

import (
	"database/sql"
	"path/filepath"
	"testing"
)

func TestWriterCheckpointInterval(t *testing.T) {
	c := openTemp(t)
	var n int
	if err := c.writer.QueryRow("PRAGMA wal_autocheckpoint").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != walCheckpointPages {
		t.Fatalf("writer's wal_autocheckpoint = %d, want %d", n, walCheckpointPages)
	}
}

// TestWriterPageSize: a new catalog has filePageSize pages and is in WAL mode;
// one made with SQLite's default keeps its pages, and its rows.
func TestWriterPageSize(t *testing.T) {
	c := openTemp(t)
	var size int
	var mode string
	if err := c.writer.QueryRow("PRAGMA page_size").Scan(&size); err != nil {
		t.Fatal(err)
	}
	if err := c.writer.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if size != filePageSize || mode != "wal" {
		t.Fatalf("new catalog: page_size %d, journal_mode %s; want %d, wal", size, mode, filePageSize)
	}

	path := filepath.Join(t.TempDir(), "old.db")
	old, err := sql.Open("sqlite3", dsn(path, ""))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Exec("CREATE TABLE t (x); INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	old.Close()
	c = openAt(t, path)
	var n int
	if err := c.writer.QueryRow("PRAGMA page_size").Scan(&size); err != nil {
		t.Fatal(err)
	}
	if err := c.writer.QueryRow("SELECT x FROM t").Scan(&n); err != nil || size != 4096 || n != 1 {
		t.Fatalf("catalog made with 4 KiB pages: page_size %d, row %d, %v; want 4096, 1", size, n, err)
	}
}
