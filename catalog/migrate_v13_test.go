package catalog

import (
	"context"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// toV12 turns the closed catalog file at path back into schema 12: no
// size bounds on the change log.
func toV12(t testing.TB, path string) {
	t.Helper()
	execOn(t, path, "ALTER TABLE changes DROP COLUMN est", "ALTER TABLE changes DROP COLUMN est_refs", "PRAGMA user_version = 12")
}

// TestMigrationV13BoundsEachChange: after the step, the change log's rows
// logged before it keep no bounds and those logged after keep theirs,
// and ScanChangeSizes gives every one, in time order, the bounds of the
// entry a Change List renders from the row, as the walk that decoded each
// change computed them: with links, a via link, a deletion, and a
// Source's URI that is not the row's.
func TestMigrationV13BoundsEachChange(t *testing.T) {
	ctx := context.Background()
	path := packFixture(t)
	toV12(t, path)
	c := openAt(t, path)

	relisted := event("s1", "c", "http://s1/relisted", resourcesync.Created, "relisted")
	relisted.Upstream.URI = "http://aggregator.example.org/s1/relisted" // harvested through another aggregator
	relisted.Upstream.Type = "application/pdf"
	linked := event("s1", "c", "http://s1/linked", resourcesync.Created, "linked")
	linked.Upstream.Links = []resourcesync.Link{{Rel: "describedby", Href: "http://s1/linked.xml", Type: "application/xml"},
		{Rel: "via", Href: "http://origin.example.net/linked?a=1&b=2"}}
	for i, ev := range []*viaduct.Event{relisted, linked, event("s1", "c", "http://s1/linked", resourcesync.Deleted, "")} {
		mustApply(t, c, uint64(101+i), ev)
	}

	var before, after int
	err := c.reader.QueryRowContext(ctx, `SELECT count(*) - count(est), count(est) FROM changes WHERE collection = 'c'`).Scan(&before, &after)
	if err != nil {
		t.Fatal(err)
	}
	if before != 4 || after != 3 {
		t.Fatalf("%d rows without bounds and %d with, want 4 logged before the step and 3 after", before, after)
	}

	type sized struct {
		at          time.Time
		fixed, refs int64
	}
	var want, got []sized
	err = c.ScanChanges(ctx, "c", time.Time{}, time.Time{}, func(ch *LoggedChange) error {
		// The entry's upstream as the republisher builds it from the row.
		up := viaduct.Change{Source: ch.Source, Collection: ch.Collection, URI: ch.URI, Op: ch.UpstreamOp,
			Time: ch.Upstream.Time, Modified: ch.Upstream.Modified, Hash: ch.Upstream.Hash,
			Length: ch.Upstream.Length, Type: ch.Upstream.Type, Links: ch.Upstream.Links}
		fixed, refs := SizeHint(ch.Type, &up)
		want = append(want, sized{ch.At, fixed, refs})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// One by one: each change's bounds. Whole: the run's sums, which here
	// hold the rows without bounds, and so are given one by one too.
	var runs int
	err = c.ScanChangeSizes(ctx, "c", time.Time{}, time.Time{}, func(r *ChangeRun) (bool, error) {
		if r.Count > 1 {
			runs++
			return false, nil
		}
		got = append(got, sized{r.First, r.Fixed, r.Refs})
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if runs != 0 {
		t.Errorf("%d runs holding changes without bounds given whole, want none", runs)
	}
	if len(got) != len(want) || len(want) != 7 {
		t.Fatalf("ScanChangeSizes gave %d changes, ScanChanges %d; want 7", len(got), len(want))
	}
	for i := range want {
		if !got[i].at.Equal(want[i].at) || got[i].fixed != want[i].fixed || got[i].refs != want[i].refs {
			t.Errorf("change %d: ScanChangeSizes gave %+v, the decoded change bounds to %+v", i, got[i], want[i])
		}
	}
	// A Source's URI that is not the row's bounds the entry by the row's.
	if fixed, _ := SizeHint(relisted.Type, &relisted.Upstream); fixed == want[4].fixed {
		t.Errorf("the relisted change's bounds do not depend on the URI it is named by: %d", fixed)
	}
}
