package sqliteconn

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestPragmasRunOnEveryConnection: a new file takes the page size set
// before WAL mode, and each connection of the pool runs the pragmas.
func TestPragmasRunOnEveryConnection(t *testing.T) {
	db := Open("file:"+filepath.Join(t.TempDir(), "t.db"),
		"PRAGMA page_size = 1024", "PRAGMA journal_mode = WAL", "PRAGMA wal_autocheckpoint = 77")
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE t (x)`); err != nil {
		t.Fatal(err)
	}
	var size int
	var mode string
	if err := db.QueryRow(`PRAGMA page_size`).Scan(&size); err != nil || size != 1024 {
		t.Errorf("page_size %d, %v; want 1024", size, err)
	}
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode %q, %v; want wal", mode, err)
	}
	// A second connection, held open beside the first.
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var n int
	if err := db.QueryRow(`PRAGMA wal_autocheckpoint`).Scan(&n); err != nil || n != 77 {
		t.Errorf("second connection's wal_autocheckpoint %d, %v; want 77", n, err)
	}
}

// TestFailedPragmaNamesIt: a pragma that fails fails the connection, and
// the error says which.
func TestFailedPragmaNamesIt(t *testing.T) {
	db := Open("file:"+filepath.Join(t.TempDir(), "t.db"), "PRAGMA journal_mode = WAL", "PRAGMA no such thing")
	defer db.Close()
	err := db.Ping()
	if err == nil || !strings.Contains(err.Error(), "PRAGMA no such thing") {
		t.Errorf("Ping = %v, want the failed pragma named", err)
	}
}
