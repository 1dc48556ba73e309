package sqlite

import "testing"

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
