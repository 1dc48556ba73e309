package catalog

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
)

// src is the Source time n minutes into a test's story.
func src(n int) time.Time {
	return time.Date(2025, 6, 1, 8, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Minute)
}

// stated builds an event of uri whose Source time is src(n).
func stated(uri, op, content string, n int) *viaduct.Event {
	ev := event("s1", "c", uri, op, content)
	ev.Upstream.Time = src(n)
	return ev
}

// permutations returns every order of the indexes 0..n-1.
func permutations(n int) [][]int {
	if n == 1 {
		return [][]int{{0}}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for i := 0; i <= len(p); i++ {
			q := append(append(append([]int{}, p[:i]...), n-1), p[i:]...)
			out = append(out, q)
		}
	}
	return out
}

// applyInOrder applies evs in the given order, one sequence each.
func applyInOrder(t *testing.T, c *Catalog, evs []*viaduct.Event, order []int) {
	t.Helper()
	for i, k := range order {
		mustApply(t, c, uint64(i+1), evs[k])
	}
}

// checkLogNeverReverts checks that the change log of uri moves forward
// in the Source's time and lists each upstream statement at most once.
func checkLogNeverReverts(t *testing.T, c *Catalog, uri string) []*ChangeRecord {
	t.Helper()
	var out []*ChangeRecord
	var prev time.Time
	for _, ch := range changes(t, c, "c") {
		if ch.URI != uri {
			continue
		}
		r := ch
		out = append(out, r)
		var lc *LoggedChange
		err := c.ScanChanges(context.Background(), "c", ch.At, ch.At.Add(time.Microsecond), func(l *LoggedChange) error {
			cp := *l
			lc = &cp
			return nil
		})
		if err != nil || lc == nil {
			t.Fatalf("ScanChanges at %s: %v", ch.At, err)
		}
		if !lc.Upstream.Time.After(prev) {
			t.Errorf("change %d (%s) at Source time %s does not follow the previous one at %s", ch.Seq, ch.Op, lc.Upstream.Time, prev)
		}
		prev = lc.Upstream.Time
	}
	return out
}

// TestEveryOrderEndsAtTheLatest applies {created T1, updated T2, deleted
// T3} of one URI in every order: the catalog ends with the resource
// deleted, nothing counted, and a change log that never goes back.
func TestEveryOrderEndsAtTheLatest(t *testing.T) {
	const uri = "http://s1/r"
	evs := []*viaduct.Event{stated(uri, cr, "v1", 1), stated(uri, upd, "v2", 2), stated(uri, del, "", 3)}
	for _, order := range permutations(len(evs)) {
		t.Run(fmt.Sprint(order), func(t *testing.T) {
			ctx := context.Background()
			c := openTemp(t)
			applyInOrder(t, c, evs, order)
			r, err := c.Resource(ctx, "c", uri)
			if err != nil || !r.Deleted || !r.Upstream.Time.Equal(src(3)) {
				t.Fatalf("Resource = %+v, %v; want deleted as of %s", r, err, src(3))
			}
			if n, b, err := c.CountResources(ctx, "c"); err != nil || n != 0 || b != 0 {
				t.Errorf("CountResources = %d, %d, %v; want 0, 0", n, b, err)
			}
			log := checkLogNeverReverts(t, c, uri)
			// The deletion came first: nothing was ever held. Else the
			// log ends with the deletion.
			if order[0] == 2 {
				if len(log) != 0 {
					t.Errorf("change log %v, want none", lines(log))
				}
				return
			}
			if last := log[len(log)-1]; last.Op != del || last.SHA256 == "" {
				t.Errorf("change log %v, want it to end with the deletion of the copy held", lines(log))
			}
			if st, err := c.Stats(ctx); err != nil || st.Changes != int64(len(log)) || st.Resources != 0 || st.LastApplied != 3 {
				t.Errorf("Stats = %+v, %v; want %d changes", st, err, len(log))
			}
		})
	}
}

// TestEveryOrderEndsAtTheLatestCopy applies {created T1, updated T2,
// deleted T3, created T4} in every order: the catalog ends holding T4's
// copy, whatever came first.
func TestEveryOrderEndsAtTheLatestCopy(t *testing.T) {
	const uri = "http://s1/r"
	evs := []*viaduct.Event{stated(uri, cr, "v1", 1), stated(uri, upd, "v2", 2), stated(uri, del, "", 3), stated(uri, cr, "v4", 4)}
	for _, order := range permutations(len(evs)) {
		t.Run(fmt.Sprint(order), func(t *testing.T) {
			ctx := context.Background()
			c := openTemp(t)
			applyInOrder(t, c, evs, order)
			r, err := c.Resource(ctx, "c", uri)
			if err != nil || r.Deleted || r.SHA256 != sha("v4") || !r.Upstream.Time.Equal(src(4)) {
				t.Fatalf("Resource = %+v, %v; want v4 held", r, err)
			}
			if n, b, err := c.CountResources(ctx, "c"); err != nil || n != 1 || b != 2 {
				t.Errorf("CountResources = %d, %d, %v; want 1, 2", n, b, err)
			}
			log := checkLogNeverReverts(t, c, uri)
			if last := log[len(log)-1]; last.SHA256 != sha("v4") || last.Op == del {
				t.Errorf("change log %v, want it to end with v4", lines(log))
			}
			if c.Outranked() != uint64(len(evs)-len(log)) && order[0] != 2 {
				// Each event is either a logged change or outranked,
				// except a deletion applied first, which is neither.
				t.Errorf("Outranked = %d with %d logged of %d", c.Outranked(), len(log), len(evs))
			}
		})
	}
}

// TestTombstone: a deletion before any creation leaves nothing held and
// makes an older creation stale; a newer creation revives the resource.
func TestTombstone(t *testing.T) {
	ctx := context.Background()
	c := openTemp(t)
	const uri = "http://s1/x"
	mustApply(t, c, 1, stated("http://s1/a", cr, "held", 1))
	mustApply(t, c, 2, stated(uri, del, "", 5))
	mustApply(t, c, 3, stated(uri, cr, "old", 4))
	mustApply(t, c, 4, stated(uri, upd, "older", 2))

	r, err := c.Resource(ctx, "c", uri)
	if err != nil || !r.Deleted || r.Seq != 0 || r.SHA256 != "" || !r.Upstream.Time.Equal(src(5)) {
		t.Fatalf("Resource = %+v, %v; want a tombstone as of %s", r, err, src(5))
	}
	checkHeldOnly(t, c, "http://s1/a")
	if c.Outranked() != 2 {
		t.Errorf("Outranked = %d, want 2", c.Outranked())
	}
	if n := lastApplied(t, c); n != 4 {
		t.Errorf("LastApplied = %d, want 4", n)
	}

	// A later deletion keeps the tombstone, with the later time.
	mustApply(t, c, 5, stated(uri, del, "", 6))
	mustApply(t, c, 6, stated(uri, cr, "old", 5))
	checkHeldOnly(t, c, "http://s1/a")

	// A newer creation revives it, logged as created.
	mustApply(t, c, 7, stated(uri, cr, "new", 7))
	r, err = c.Resource(ctx, "c", uri)
	if err != nil || r.Deleted || r.SHA256 != sha("new") || r.Seq != 7 {
		t.Fatalf("revived: %+v, %v", r, err)
	}
	log := lines(changes(t, c, "c"))
	want := fmt.Sprint([]logLine{{1, "http://s1/a", cr, sha("held")}, {7, uri, cr, sha("new")}})
	if fmt.Sprint(log) != want {
		t.Errorf("change log %v, want %s", log, want)
	}
	if n, b, err := c.CountResources(ctx, "c"); err != nil || n != 2 || b != 7 {
		t.Errorf("CountResources = %d, %d, %v; want 2, 7", n, b, err)
	}
	if _, err := c.ResourceByOrigin(ctx, "c", uri); err != nil {
		t.Errorf("ResourceByOrigin of the revived resource: %v", err)
	}
}

// checkHeldOnly checks that every read of the catalog sees the single
// resource held, never a tombstone.
func checkHeldOnly(t *testing.T, c *Catalog, held string) {
	t.Helper()
	ctx := context.Background()
	var uris []string
	collect := func(r *Resource) error { uris = append(uris, r.URI); return nil }
	if err := c.Resources(ctx, "c", "", 0, collect); err != nil {
		t.Fatal(err)
	}
	if err := c.SourceResources(ctx, "s1", "c", collect); err != nil {
		t.Fatal(err)
	}
	if err := c.ScanResources(ctx, "c", "", 0, func(rs *ResourceState) error {
		uris = append(uris, rs.URI)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(uris) != fmt.Sprint([]string{held, held, held}) {
		t.Errorf("listed %v, want %s in each list", uris, held)
	}
	if n, b, err := c.CountResources(ctx, "c"); err != nil || n != 1 || b != 4 {
		t.Errorf("CountResources = %d, %d, %v; want 1, 4", n, b, err)
	}
	if st, err := c.CollectionStats(ctx, "c"); err != nil || st.Resources != 1 || st.Changes != 1 {
		t.Errorf("CollectionStats = %+v, %v", st, err)
	}
	if st, err := c.Stats(ctx); err != nil || st.Resources != 1 || st.Changes != 1 || st.Collections != 1 {
		t.Errorf("Stats = %+v, %v", st, err)
	}
	for _, ch := range changes(t, c, "c") {
		if ch.URI != held {
			t.Errorf("change log lists %s %s", ch.Op, ch.URI)
		}
	}
	if n, _, err := cutResources(ctx, c, "c", "", 100, 1, 1<<20); err != nil || n != 1 {
		t.Errorf("cutResources = %d, %v; want 1", n, err)
	}
	const x = "http://s1/x"
	if _, err := c.ResourceByOrigin(ctx, "c", x); !errors.Is(err, ErrNotFound) {
		t.Errorf("ResourceByOrigin(tombstone) error = %v, want ErrNotFound", err)
	}
	if found, err := c.ResourcesByURI(ctx, x); err != nil || len(found) != 0 {
		t.Errorf("ResourcesByURI(tombstone) = %d, %v; want none", len(found), err)
	}
	if _, err := c.Provenance(ctx, x); !errors.Is(err, ErrNotFound) {
		t.Errorf("Provenance(tombstone) error = %v, want ErrNotFound", err)
	}
}

// TestEqualSourceTimes: at one Source time a deletion outranks a copy,
// and of two copies the same one wins in either order.
func TestEqualSourceTimes(t *testing.T) {
	ctx := context.Background()
	const uri = "http://s1/r"
	for _, tc := range []struct {
		name string
		evs  []*viaduct.Event
		want string // content held, "" for deleted
	}{
		{"created then deleted", []*viaduct.Event{stated(uri, cr, "v1", 1), stated(uri, del, "", 1)}, ""},
		{"deleted then created", []*viaduct.Event{stated(uri, del, "", 1), stated(uri, cr, "v1", 1)}, ""},
		{"two copies", []*viaduct.Event{stated(uri, cr, "v1", 1), stated(uri, upd, "v2", 1)}, max2("v1", "v2")},
		{"two copies reversed", []*viaduct.Event{stated(uri, upd, "v2", 1), stated(uri, cr, "v1", 1)}, max2("v1", "v2")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := openTemp(t)
			applyInOrder(t, c, tc.evs, []int{0, 1})
			r, err := c.Resource(ctx, "c", uri)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" && !r.Deleted || tc.want != "" && (r.Deleted || r.SHA256 != sha(tc.want)) {
				t.Errorf("Resource = %+v, want %q", r, tc.want)
			}
		})
	}
}

// max2 is the content of the two whose sha-256 sorts last.
func max2(a, b string) string {
	if sha(a) > sha(b) {
		return a
	}
	return b
}

// TestListedAfterDeletion: a baseline lists a resource again, with a
// lastmod older than the deletion the catalog recorded; the list's at is
// later, so the resource comes back. The same entry without the list's
// at is stale.
func TestListedAfterDeletion(t *testing.T) {
	ctx := context.Background()
	c := openTemp(t)
	const uri = "http://s1/r"
	mustApply(t, c, 1, stated(uri, cr, "v1", 1))
	mustApply(t, c, 2, stated(uri, del, "", 3))
	mustApply(t, c, 3, stated(uri, cr, "v1", 1)) // a replay: stale
	if r, err := c.Resource(ctx, "c", uri); err != nil || !r.Deleted {
		t.Fatalf("after a stale creation: %+v, %v", r, err)
	}
	ev := stated(uri, cr, "v1", 1)
	ev.Upstream.Listed = src(9)
	mustApply(t, c, 4, ev)
	wantCopy(t, c, uri, "v1", "after the listing")
	// A change the Source made before the list's at is now stale.
	mustApply(t, c, 5, stated(uri, upd, "v2", 8))
	wantCopy(t, c, uri, "v1", "a change older than the list's at was applied")
}

// TestNoSourceTime: an event without a Source time is applied in stream
// order and leaves the row's time as it was, so older events stay stale.
func TestNoSourceTime(t *testing.T) {
	c := openTemp(t)
	const uri = "http://s1/r"
	mustApply(t, c, 1, stated(uri, cr, "v1", 5))
	untimed := stated(uri, upd, "v2", 0)
	untimed.Upstream.Time = time.Time{}
	mustApply(t, c, 2, untimed)
	wantCopy(t, c, uri, "v2", "untimed event not applied")
	mustApply(t, c, 3, stated(uri, upd, "v3", 4))
	wantCopy(t, c, uri, "v2", "an event older than the row's time was applied")
	mustApply(t, c, 4, stated(uri, upd, "v4", 6))
	wantCopy(t, c, uri, "v4", "a newer event was not applied")
}

// TestOutOfOrderBatch applies a reversed burst in one transaction: the
// same end as one by one.
func TestOutOfOrderBatch(t *testing.T) {
	ctx := context.Background()
	c := openTemp(t)
	const uri = "http://s1/r"
	err := c.ApplyBatch(ctx, []Applied{
		{Seq: 1, At: t0, Event: stated(uri, upd, "v3", 3)},
		{Seq: 2, At: t0, Event: stated(uri, upd, "v2", 2)},
		{Seq: 3, At: t0, Event: stated(uri, cr, "v1", 1)},
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Resource(ctx, "c", uri)
	if err != nil || r.SHA256 != sha("v3") || r.Seq != 1 {
		t.Fatalf("Resource = %+v, %v; want v3 from event 1", r, err)
	}
	if log := lines(changes(t, c, "c")); len(log) != 1 || log[0].op != cr {
		t.Errorf("change log %v, want v3 created only", log)
	}
	if n := lastApplied(t, c); n != 3 {
		t.Errorf("LastApplied = %d, want 3", n)
	}
}

// wantCopy fails the test unless the catalog holds uri of collection "c"
// with content's copy.
func wantCopy(t *testing.T, c *Catalog, uri, content, what string) {
	t.Helper()
	if r, err := c.Resource(context.Background(), "c", uri); err != nil || r.Deleted || r.SHA256 != sha(content) {
		t.Fatalf("%s: %+v, %v", what, r, err)
	}
}
