package catalog

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// TestPrune applies retention at a cutoff between two groups of changes
// and checks what the change log, the deleted resources, the snapshots,
// the Change Lists and the blob references keep.
func TestPrune(t *testing.T) {
	ctx := context.Background()
	c := openTemp(t)
	mustApply(t, c, 1, event("s", "c", "http://s/a", resourcesync.Created, "a1"))
	mustApply(t, c, 2, event("s", "c", "http://s/b", resourcesync.Created, "b1"))
	mustApply(t, c, 3, event("s", "c", "http://s/c", resourcesync.Created, "c1"))
	mustApply(t, c, 4, event("s", "c", "http://s/c", resourcesync.Deleted, ""))
	mustApply(t, c, 5, event("s", "c", "http://s/a", resourcesync.Updated, "a2"))
	mustApply(t, c, 6, event("s", "c", "http://s/never", resourcesync.Deleted, "")) // a tombstone
	mustApply(t, c, 100, event("s", "c", "http://s/a", resourcesync.Updated, "a3"))
	mustApply(t, c, 101, event("s", "c", "http://s/b", resourcesync.Updated, "b2"))
	cutoff := t0.Add(50 * time.Second)

	p, err := c.Prune(ctx, cutoff, 0)
	if err != nil {
		t.Fatal(err)
	}
	// a's creation (a later change of a is before the cutoff), c's
	// creation and deletion; c's row and the tombstone.
	if p.Changes != 3 || p.Tombstones != 2 {
		t.Errorf("Prune = %+v, want 3 changes and 2 tombstones", p)
	}
	var listed []uint64
	err = c.ScanChanges(ctx, "c", time.Time{}, time.Time{}, func(ch *LoggedChange) error {
		listed = append(listed, ch.Seq)
		return nil
	})
	if err != nil || !slices.Equal(listed, []uint64{100, 101}) {
		t.Errorf("change log listed %v, %v; want only the changes after the cutoff, [100 101]", listed, err)
	}
	st, err := c.CollectionStats(ctx, "c")
	if err != nil || !st.First.Equal(cutoff) || st.Changes != 4 {
		t.Errorf("stats %+v, %v; want first = the cutoff %v and 4 changes kept (2, 5, 100, 101)", st, err, cutoff)
	}
	if _, err := c.SnapshotAt(ctx, "c", 4); !errors.Is(err, ErrSnapshotGone) {
		t.Errorf("SnapshotAt(4) = %v, want ErrSnapshotGone", err)
	}
	// The horizon's own snapshot still reads: a as its update at 5 left it.
	want := []string{"http://s/a=" + sha("a2")[:8], "http://s/b=" + sha("b1")[:8]}
	if got := listAt(t, c, "", "", 5); !slices.Equal(got, want) {
		t.Errorf("at 5 after pruning: %v, want %v", got, want)
	}
	for _, uri := range []string{"http://s/c", "http://s/never"} {
		if _, found, err := c.Lookup(ctx, "c", uri); found || err != nil {
			t.Errorf("Lookup(%s) after pruning = %v, %v; want its row gone", uri, found, err)
		}
	}
	refs := map[string]bool{}
	if _, err := c.BlobRefs(ctx, func(s string) error { refs[s] = true; return nil }); err != nil {
		t.Fatal(err)
	}
	for content, kept := range map[string]bool{"a1": false, "a2": true, "a3": true, "b1": true, "b2": true, "c1": false} {
		if refs[sha(content)] != kept {
			t.Errorf("blob of %s referenced = %v, want %v", content, refs[sha(content)], kept)
		}
	}
	// Again at the same cutoff: nothing more.
	if p, err := c.Prune(ctx, cutoff, 0); err != nil || p != (Pruned{}) {
		t.Errorf("second Prune = %+v, %v; want nothing", p, err)
	}
}

// TestPruneQuietCollection: a collection whose last change is older than
// the cutoff is cut at that change's period, so that its last Change
// List stays whole and listed.
func TestPruneQuietCollection(t *testing.T) {
	ctx := context.Background()
	c := openTemp(t)
	mustApply(t, c, 1, event("s", "q", "http://s/a", resourcesync.Created, "a1"))
	mustApply(t, c, 70, event("s", "q", "http://s/a", resourcesync.Updated, "a2"))
	if _, err := c.Prune(ctx, t0.Add(time.Hour), time.Minute); err != nil {
		t.Fatal(err)
	}
	st, err := c.CollectionStats(ctx, "q")
	if want := t0.Add(time.Minute); err != nil || !st.First.Equal(want) || !st.Horizon.Equal(want) {
		t.Errorf("stats %+v, %v; want first and horizon %v, the last change's minute", st, err, want)
	}
	var listed []uint64
	c.ScanChanges(ctx, "q", time.Time{}, time.Time{}, func(ch *LoggedChange) error {
		listed = append(listed, ch.Seq)
		return nil
	})
	if !slices.Equal(listed, []uint64{70}) {
		t.Errorf("change log lists %v, want the last change, [70]", listed)
	}
}
