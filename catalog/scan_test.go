package catalog

import (
	"context"
	"fmt"
	"testing"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// TestResourceScanPinsNoSnapshot: while a ScanResources walk (a Resource
// Dump's) is half done, with rows applied meanwhile, the WAL can be
// checkpointed and truncated; the walk still gives the catalog as it was
// when it began, every resource once and in URI order; and a limit stops
// it after that many.
func TestResourceScanPinsNoSnapshot(t *testing.T) {
	ctx := context.Background()
	c := openTemp(t)
	const n = 2500 // two and a half chunks
	next := fill(t, c, "s", "c", 1, n)
	uri := func(k int) string { return filledURI("s", k) }

	var got []string
	err := c.ScanResources(ctx, "c", "", 0, func(rs *ResourceState) error {
		if len(got) == pageSize+10 {
			mustApply(t, c, next, event("s", "c", uri(n-1), resourcesync.Deleted, ""))
			mustApply(t, c, next+1, event("s", "c", uri(n-2), resourcesync.Updated, "changed"))
			mustApply(t, c, next+2, event("s", "c", "http://s/zzz", resourcesync.Created, "new"))
			st, err := c.TruncateWAL(ctx)
			if err != nil {
				t.Fatalf("checkpoint mid-walk: %v", err)
			}
			if st.Busy || st.Frames != 0 {
				t.Errorf("checkpoint mid-walk: %+v; want the WAL truncated, no reader in the way", st)
			}
		}
		if rs.URI == uri(len(got)) && rs.SHA256 != sha(fmt.Sprint(len(got))) {
			t.Errorf("%s: sha256 %s, not the content it had when the walk began", rs.URI, rs.SHA256)
		}
		got = append(got, rs.URI)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n || got[0] != uri(0) || got[n-1] != uri(n-1) {
		t.Fatalf("walk read %d resources, %s .. %s; want the %d held when it began", len(got), got[0], got[len(got)-1], n)
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Fatalf("not in URI order at %d: %s after %s", i, got[i], got[i-1])
		}
	}

	got = got[:0]
	err = c.ScanResources(ctx, "c", uri(10), 1500, func(rs *ResourceState) error {
		got = append(got, rs.URI)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1500 || got[0] != uri(11) {
		t.Fatalf("walk after %s with limit 1500 read %d resources from %s", uri(10), len(got), got[0])
	}
}
