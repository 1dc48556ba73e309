package catalog

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// TestListReadPinsNoSnapshot: while a Resource List (read at a sequence)
// and a Change List are half read, with rows applied meanwhile, the WAL
// can be checkpointed and truncated: neither read holds a snapshot between
// its chunks. The Resource List still comes out as the catalog was at its
// sequence, every resource once; the Change List in order, every change
// once.
func TestListReadPinsNoSnapshot(t *testing.T) {
	ctx := context.Background()
	c := openTemp(t)
	const n = 2500 // two and a half chunks
	next := fill(t, c, "s", "c", 1, n)
	seq := next - 1
	uri := func(k int) string { return filledURI("s", k) }

	midway := func(i int) {
		t.Helper()
		if i != pageSize+10 {
			return
		}
		// Ahead of the walk: one deleted, one updated, one created.
		mustApply(t, c, next, event("s", "c", uri(n-1), resourcesync.Deleted, ""))
		mustApply(t, c, next+1, event("s", "c", uri(n-2), resourcesync.Updated, "changed"))
		mustApply(t, c, next+2, event("s", "c", "http://s/zzz", resourcesync.Created, "new"))
		next += 3
		st, err := c.TruncateWAL(ctx)
		if err != nil {
			t.Fatalf("checkpoint mid-walk: %v", err)
		}
		if st.Busy || st.Frames != 0 {
			t.Errorf("checkpoint mid-walk: %+v; want the WAL truncated, no reader in the way", st)
		}
	}

	var got []string
	err := c.ScanResourcesAt(ctx, "c", "", "", seq, func(rs *ResourceState) error {
		midway(len(got))
		if rs.SHA256 != sha(fmt.Sprint(len(got))) && rs.URI == uri(len(got)) {
			t.Errorf("%s: sha256 %s, not the content it had at %d", rs.URI, rs.SHA256, seq)
		}
		got = append(got, rs.URI)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n || got[0] != uri(0) || got[n-1] != uri(n-1) {
		t.Fatalf("Resource List at %d read %d resources, %s .. %s; want the %d held then", seq, len(got), got[0], got[len(got)-1], n)
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Fatalf("not in URI order at %d: %s after %s", i, got[i], got[i-1])
		}
	}

	var seqs []uint64
	next0 := next
	err = c.ScanChanges(ctx, "c", time.Time{}, time.Time{}, func(ch *LoggedChange) error {
		midway(len(seqs))
		seqs = append(seqs, ch.Seq)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := int(next0 - 1); len(seqs) < want {
		t.Fatalf("Change List read %d changes, want at least the %d logged when it began", len(seqs), want)
	}
	for i := 1; i < len(seqs); i++ {
		if seqs[i] <= seqs[i-1] {
			t.Fatalf("changes out of order or repeated at %d: %d after %d", i, seqs[i], seqs[i-1])
		}
	}
}
