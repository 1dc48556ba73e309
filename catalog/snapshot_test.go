package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// listAt reads ScanResourcesAt as "uri=sha256" strings.
func listAt(t *testing.T, c *Catalog, after, last string, seq uint64) []string {
	t.Helper()
	var out []string
	err := c.ScanResourcesAt(context.Background(), "c", after, last, seq, func(rs *ResourceState) error {
		out = append(out, rs.URI+"="+rs.SHA256[:8])
		return nil
	})
	if err != nil {
		t.Fatalf("ScanResourcesAt(%q, %q, %d): %v", after, last, seq, err)
	}
	return out
}

// snapshotFixture holds a, b, c, d at sequence 4, then changes them every
// way there is: b updated twice, c deleted, e created, f created and
// deleted, d deleted and created again, a left alone.
func snapshotFixture(t *testing.T, c *Catalog) (at4 []string) {
	seq := uint64(0)
	apply := func(uri, op, content string) {
		seq++
		mustApply(t, c, seq, event("s", "c", "http://s/"+uri, op, content))
	}
	for _, u := range []string{"a", "b", "c", "d"} {
		apply(u, resourcesync.Created, u+"1")
	}
	at4 = []string{"http://s/a=" + sha("a1")[:8], "http://s/b=" + sha("b1")[:8], "http://s/c=" + sha("c1")[:8], "http://s/d=" + sha("d1")[:8]}
	apply("b", resourcesync.Updated, "b2")
	apply("c", resourcesync.Deleted, "")
	apply("e", resourcesync.Created, "e1")
	apply("f", resourcesync.Created, "f1")
	apply("b", resourcesync.Updated, "b3")
	apply("f", resourcesync.Deleted, "")
	apply("d", resourcesync.Deleted, "")
	apply("d", resourcesync.Created, "d2")
	return at4
}

// TestScanResourcesAt lists a collection as it was at an earlier sequence,
// whole and by ranges, after every kind of change since.
func TestScanResourcesAt(t *testing.T) {
	c := openTemp(t)
	at4 := snapshotFixture(t, c)
	if got := listAt(t, c, "", "", 4); fmt.Sprint(got) != fmt.Sprint(at4) {
		t.Errorf("at 4: %v, want %v", got, at4)
	}
	// Ranges split anywhere cover the same entries exactly once.
	var joined []string
	bounds := []string{"", "http://s/a", "http://s/c", "http://s/cz", ""}
	for i := 0; i+1 < len(bounds); i++ {
		after, last := bounds[i], bounds[i+1]
		if i == len(bounds)-2 {
			last = ""
		}
		joined = append(joined, listAt(t, c, after, last, 4)...)
	}
	if fmt.Sprint(joined) != fmt.Sprint(at4) {
		t.Errorf("at 4 by ranges: %v, want %v", joined, at4)
	}
	now := []string{"http://s/a=" + sha("a1")[:8], "http://s/b=" + sha("b3")[:8], "http://s/d=" + sha("d2")[:8], "http://s/e=" + sha("e1")[:8]}
	if got := listAt(t, c, "", "", 12); fmt.Sprint(got) != fmt.Sprint(now) {
		t.Errorf("at 12: %v, want %v", got, now)
	}
	at8 := []string{"http://s/a=" + sha("a1")[:8], "http://s/b=" + sha("b2")[:8], "http://s/d=" + sha("d1")[:8],
		"http://s/e=" + sha("e1")[:8], "http://s/f=" + sha("f1")[:8]}
	if got := listAt(t, c, "", "", 8); fmt.Sprint(got) != fmt.Sprint(at8) {
		t.Errorf("at 8: %v, want %v", got, at8)
	}
	if _, err := c.SnapshotAt(context.Background(), "c", 13); !errors.Is(err, ErrSnapshotAhead) {
		t.Errorf("SnapshotAt(13) on a catalog at 12 = %v, want ErrSnapshotAhead", err)
	}
	if at, err := c.SnapshotAt(context.Background(), "c", 4); err != nil || !at.Equal(t0.Add(4e9)) {
		t.Errorf("SnapshotAt(4) = %v, %v; want the time of change 4, %v", at, err, t0.Add(4e9))
	}
}

// TestMigrationFillsPrev opens a catalog written before changes knew their
// predecessor and checks that the migration links them, so snapshots of
// old sequences read right.
func TestMigrationFillsPrev(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.db")
	old := openAt(t, path)
	at4 := snapshotFixture(t, old)
	old.Close()
	toV8(t, path)
	db, err := sql.Open("sqlite3", dsn(path, ""))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"ALTER TABLE changes DROP COLUMN prev", "ALTER TABLE collections DROP COLUMN horizon",
		"ALTER TABLE collections DROP COLUMN horizon_seq", "PRAGMA user_version = 4"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	c := openAt(t, path)
	if got := listAt(t, c, "", "", 4); strings.Join(got, " ") != strings.Join(at4, " ") {
		t.Errorf("after migration, at 4: %v, want %v", got, at4)
	}
}
