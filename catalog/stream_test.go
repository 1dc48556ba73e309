package catalog

import (
	"context"
	"crypto/md5"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// TestScanChangesKeepsEachUpstream checks that every change of the log
// comes back with what the Source said of that change, not its latest
// word, and that the time range is [from, until).
func TestScanChangesKeepsEachUpstream(t *testing.T) {
	ctx := context.Background()
	c := openTemp(t)
	const uri = "http://s1/a"
	m1 := time.Date(2020, 1, 2, 3, 4, 5, 600, time.UTC)
	ev := event("s1", "c", uri, resourcesync.Created, "one")
	ev.Upstream.Modified = m1
	ev.Upstream.Links = []resourcesync.Link{{Rel: "describedby", Href: "http://s1/a.meta"}}
	mustApply(t, c, 1, ev)
	ev = event("s1", "c", uri, resourcesync.Updated, "two")
	ev.Upstream.Modified = m1.Add(time.Hour)
	mustApply(t, c, 2, ev)
	ev = event("s1", "c", uri, resourcesync.Deleted, "")
	mustApply(t, c, 3, ev)

	var got []string
	err := c.ScanChanges(ctx, "c", time.Time{}, time.Time{}, func(ch *LoggedChange) error {
		got = append(got, fmt.Sprintf("%d %s %s/%s mod=%s hash=%s links=%d", ch.Seq, ch.Source, ch.Op, ch.UpstreamOp,
			ch.Upstream.Modified.Format(time.RFC3339Nano), ch.Upstream.Hash, len(ch.Upstream.Links)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		fmt.Sprintf("1 s1 created/created mod=2020-01-02T03:04:05.0000006Z hash=md5:%s links=1", md5hex("one")),
		fmt.Sprintf("2 s1 updated/updated mod=2020-01-02T04:04:05.0000006Z hash=md5:%s links=0", md5hex("two")),
		"3 s1 deleted/deleted mod=0001-01-01T00:00:00Z hash= links=0",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ScanChanges:\n got %q\nwant %q", got, want)
	}

	// Change times are t0+1s, t0+2s, t0+3s.
	seqs := func(from, until time.Time) []uint64 {
		var out []uint64
		if err := c.ScanChanges(ctx, "c", from, until, func(ch *LoggedChange) error {
			out = append(out, ch.Seq)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	sec := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }
	for _, tc := range []struct {
		from, until time.Time
		want        string
	}{
		{sec(2), time.Time{}, "[2 3]"},
		{time.Time{}, sec(2), "[1]"},
		{sec(1), sec(3), "[1 2]"},
		{sec(4), time.Time{}, "[]"},
	} {
		if got := fmt.Sprint(seqs(tc.from, tc.until)); got != tc.want {
			t.Errorf("ScanChanges(%s, %s) = %s, want %s", tc.from, tc.until, got, tc.want)
		}
	}
	if got := fmt.Sprint(seqs(time.Time{}, time.Time{})); got != "[1 2 3]" {
		t.Errorf("other collection leaks in or order wrong: %s", got)
	}
}

// TestScanResourcesOneSnapshot checks that a walk sees the catalog as it
// was when it started, however many rows it reads and whatever is applied
// meanwhile, and honours afterURI and limit.
func TestScanResourcesOneSnapshot(t *testing.T) {
	ctx := context.Background()
	c := openTemp(t)
	const n = 2500 // more than a page of Resources
	seq := fill(t, c, "s1", "c", 1, n)
	first := true
	var got []string
	err := c.ScanResources(ctx, "c", "", 0, func(rs *ResourceState) error {
		if first {
			first = false
			mustApply(t, c, seq, event("s1", "c", fmt.Sprintf("http://s1/r%07d", n-1), resourcesync.Deleted, ""))
			mustApply(t, c, seq+1, event("s1", "c", "http://s1/zzz", resourcesync.Created, "new"))
		}
		if rs.Op != resourcesync.Created || rs.Deleted || rs.Source != "s1" {
			t.Errorf("%s: op %q deleted %v source %q", rs.URI, rs.Op, rs.Deleted, rs.Source)
		}
		got = append(got, rs.URI)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n || got[0] != "http://s1/r0000000" || got[n-1] != fmt.Sprintf("http://s1/r%07d", n-1) {
		t.Fatalf("walk during writes saw %d resources, %s .. %s; want the %d held when it began", len(got), got[0], got[len(got)-1], n)
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Fatalf("not in URI order at %d: %s after %s", i, got[i], got[i-1])
		}
	}

	// After the writes: the deleted one is gone, the new one is there.
	got = got[:0]
	err = c.ScanResources(ctx, "c", "http://s1/r0002497", 3, func(rs *ResourceState) error {
		got = append(got, rs.URI)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := "[http://s1/r0002498 http://s1/zzz]"; fmt.Sprint(got) != want {
		t.Errorf("ScanResources after r0002497 = %v, want %s", got, want)
	}
	got = got[:0]
	if err := c.ScanResources(ctx, "c", "", 2, func(rs *ResourceState) error { got = append(got, rs.URI); return nil }); err != nil {
		t.Fatal(err)
	}
	if want := "[http://s1/r0000000 http://s1/r0000001]"; fmt.Sprint(got) != want {
		t.Errorf("ScanResources limit 2 = %v, want %s", got, want)
	}
	stop := errors.New("stop")
	if err := c.ScanResources(ctx, "c", "", 0, func(*ResourceState) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("error from fn: got %v", err)
	}
}

// TestResourceByOrigin checks the lookups the republisher makes: by origin
// within a collection, and by harvested or origin URI anywhere.
func TestResourceByOrigin(t *testing.T) {
	ctx := context.Background()
	c := openTemp(t)
	origin, harvested := holdOriginTwice(t, c)

	rs, err := c.ResourceByOrigin(ctx, "c", origin)
	if err != nil {
		t.Fatal(err)
	}
	if rs.URI != harvested || rs.Origin != origin || rs.Op != resourcesync.Created || len(rs.Upstream.Links) != 1 {
		t.Errorf("ResourceByOrigin = %+v", rs)
	}
	if _, err := c.ResourceByOrigin(ctx, "c", harvested); !errors.Is(err, ErrNotFound) {
		t.Errorf("by harvested URI: %v, want ErrNotFound", err)
	}
	if _, err := c.ResourceByOrigin(ctx, "e", origin); !errors.Is(err, ErrNotFound) {
		t.Errorf("other collection: %v, want ErrNotFound", err)
	}
	// A resource harvested from its origin is found by it too.
	if rs, err := c.ResourceByOrigin(ctx, "d", origin); err != nil || rs.URI != origin || rs.Source != "direct" {
		t.Errorf("at its origin: %+v, %v", rs, err)
	}

	// An aggregator's deletion entry carries its via link too.
	ev := event("agg", "c", harvested, resourcesync.Deleted, "")
	ev.Upstream.Links = []resourcesync.Link{{Rel: "via", Href: origin}}
	mustApply(t, c, 3, ev)
	rs, err = c.ResourceByOrigin(ctx, "c", origin)
	if err != nil || !rs.Deleted || rs.Op != resourcesync.Deleted || rs.SHA256 != sha("doc") {
		t.Errorf("deleted: %+v, %v", rs, err)
	}

	for _, tc := range []struct{ uri, want string }{
		{origin, "[c " + harvested + " d " + origin + "]"},
		{harvested, "[c " + harvested + "]"},
		{"http://nowhere/", "[]"},
	} {
		found, err := c.ResourcesByURI(ctx, tc.uri)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range found {
			got = append(got, r.Collection, r.URI)
		}
		if g := fmt.Sprint(got); g != tc.want {
			t.Errorf("ResourcesByURI(%s) = %s, want %s", tc.uri, g, tc.want)
		}
	}
}

func TestCollectionStats(t *testing.T) {
	ctx := context.Background()
	c := openTemp(t)
	mustApply(t, c, 1, event("s1", "c", "http://s1/a", resourcesync.Created, "aa"))
	mustApply(t, c, 2, event("s1", "c", "http://s1/b", resourcesync.Created, "bbb"))
	mustApply(t, c, 3, event("s1", "c", "http://s1/a", resourcesync.Updated, "aaaa"))
	mustApply(t, c, 4, event("s1", "c", "http://s1/a", resourcesync.Updated, "aaaa")) // no change
	mustApply(t, c, 5, event("s1", "c", "http://s1/b", resourcesync.Deleted, ""))
	st, err := c.CollectionStats(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	want := CollectionStats{Resources: 1, Bytes: 4, Changes: 4, First: t0.Add(time.Second), Last: t0.Add(5 * time.Second)}
	if st != want {
		t.Errorf("CollectionStats = %+v, want %+v", st, want)
	}
	// A collection without a change has the time of the last change
	// applied as its floor: whatever it gets later comes after it.
	if st, err := c.CollectionStats(ctx, "none"); err != nil || st != (CollectionStats{Floor: t0.Add(5 * time.Second)}) {
		t.Errorf("unknown collection: %+v, %v", st, err)
	}
}

// TestMigrationFillsChangeUpstream opens a catalog written before the
// change log kept upstream metadata and checks that its rows get their
// resource's.
func TestMigrationFillsChangeUpstream(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "catalog.db")
	old, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	ev := event("s1", "c", "http://s1/a", resourcesync.Created, "one")
	ev.Upstream.Modified = t0.Add(-48 * time.Hour)
	if err := old.Apply(ctx, 1, t0, ev); err != nil {
		t.Fatal(err)
	}
	old.Close()

	// Turn the file back into a version 1 catalog holding that change.
	toV8(t, path)
	db, err := sql.Open("sqlite3", dsn(path, ""))
	if err != nil {
		t.Fatal(err)
	}
	dropV3(t, db)
	for _, col := range []string{"source", "up_op", "up_time", "up_modified", "up_hash", "up_length", "up_type", "links"} {
		if _, err := db.Exec("ALTER TABLE changes DROP COLUMN " + col); err != nil {
			t.Fatalf("drop %s: %v", col, err)
		}
	}
	if _, err := db.Exec("PRAGMA user_version = 1"); err != nil {
		t.Fatal(err)
	}
	db.Close()

	c := openAt(t, path)
	n := 0
	err = c.ScanChanges(ctx, "c", time.Time{}, time.Time{}, func(ch *LoggedChange) error {
		n++
		if ch.Source != "s1" || ch.UpstreamOp != resourcesync.Created || !ch.Upstream.Modified.Equal(ev.Upstream.Modified) ||
			ch.Upstream.Hash.String() != "md5:"+md5hex("one") {
			t.Errorf("migrated change: %+v", ch)
		}
		return nil
	})
	if err != nil || n != 1 {
		t.Fatalf("ScanChanges: %d changes, %v", n, err)
	}
}

// md5hex is the hex md5 of content.
func md5hex(content string) string {
	m := md5.Sum([]byte(content))
	return hex.EncodeToString(m[:])
}
