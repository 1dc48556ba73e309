package catalog

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// fillParts applies n creations to collection "c" whose sizes change in
// blocks along the URI order (so that a part's guess from the one before
// it is sometimes short, sometimes long), one far larger than the rest,
// and deletes every seventh. It returns the last sequence applied.
func fillParts(t *testing.T, c *Catalog, n int) uint64 {
	t.Helper()
	var batch []Applied
	seq := uint64(0)
	add := func(ev *viaduct.Event) {
		seq++
		batch = append(batch, Applied{Seq: seq, At: t0.Add(time.Duration(seq) * time.Millisecond), Event: ev})
	}
	for i := range n {
		ev := event("s1", "c", fmt.Sprintf("http://s1/r%05d", i), resourcesync.Created, fmt.Sprint(i))
		for j := range []int{0, 3, 1, 6, 0, 2}[(i/97)%6] {
			ev.Upstream.Links = append(ev.Upstream.Links, resourcesync.Link{Rel: "alternate",
				Href: fmt.Sprintf("http://s1/r%05d/alt%d/%s", i, j, strings.Repeat("x", i%13))})
		}
		if i == n/3 {
			ev.Upstream.Links = append(ev.Upstream.Links, resourcesync.Link{Rel: "describedby", Href: "http://s1/" + strings.Repeat("big", 3000)})
		}
		add(ev)
	}
	for i := 0; i < n; i += 7 {
		add(event("s1", "c", fmt.Sprintf("http://s1/r%05d", i), resourcesync.Deleted, ""))
	}
	if err := c.ApplyBatch(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	return seq
}

// wantCuts cuts the held resources of "c" as PlanResources must, from the
// sizes on the rows, one entry at a time.
func wantCuts(t *testing.T, c *Catalog, maxEntries int, perRef, budget int64) []Cut {
	t.Helper()
	rows, err := c.reader.Query(`SELECT uri, est + est_refs * ? FROM resources WHERE collection = 'c' AND deleted = 0 ORDER BY uri`, perRef)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var (
		cuts []Cut
		cur  Cut
		sum  int64
	)
	for rows.Next() {
		var (
			uri string
			n   int64
		)
		if err := rows.Scan(&uri, &n); err != nil {
			t.Fatal(err)
		}
		if cur.Entries > 0 && (cur.Entries == maxEntries || sum+n > budget) {
			cuts = append(cuts, cur)
			cur, sum = Cut{}, 0
		}
		cur.Entries++
		cur.Last = uri
		sum += n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if cur.Entries > 0 {
		cuts = append(cuts, cur)
	}
	return cuts
}

// TestPlanResources checks that the guessed cuts of PlanResources are the
// exact ones, whether the entry limit or the byte budget ends the parts,
// with parts of changing sizes and an entry larger than any budget; and
// that the plan names the state it was made from.
func TestPlanResources(t *testing.T) {
	ctx := context.Background()
	c := openTemp(t)
	seq := fillParts(t, c, 2000)
	for _, tc := range []struct {
		maxEntries     int
		perRef, budget int64
	}{
		{100, 30, 1 << 40},   // entries only
		{1000, 30, 150_000},  // bytes only
		{150, 30, 180_000},   // both
		{5000, 0, 40_000},    // small parts, sizes vary most
		{2, 30, 1 << 40},     // tiny parts
		{100, 30, 1500},      // budget below most entries: one each
		{1000, 120, 500_000}, // a part as large as the collection
	} {
		want := wantCuts(t, c, tc.maxEntries, tc.perRef, tc.budget)
		got, gotSeq, err := c.PlanResources(ctx, "c", tc.maxEntries, tc.perRef, tc.budget)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("PlanResources(%d, %d, %d) = %d cuts\n%v\nwant %d\n%v", tc.maxEntries, tc.perRef, tc.budget, len(got), got, len(want), want)
		}
		if gotSeq != seq {
			t.Errorf("PlanResources: seq %d, want %d", gotSeq, seq)
		}
		// cutResources, part by part without a guess, agrees.
		after := ""
		for i, w := range want {
			n, last, err := cutResources(ctx, c, "c", after, tc.maxEntries, tc.perRef, tc.budget)
			if err != nil || n != w.Entries || last != w.Last {
				t.Fatalf("cutResources part %d = %d, %s, %v; want %d, %s", i+1, n, last, err, w.Entries, w.Last)
			}
			after = last
		}
	}
	if cuts, _, err := c.PlanResources(ctx, "none", 10, 1, 1000); err != nil || len(cuts) != 0 {
		t.Errorf("PlanResources(empty collection) = %v, %v; want no cuts", cuts, err)
	}
	mustApply(t, c, seq+1, event("s1", "c", "http://s1/zzz", resourcesync.Created, "new"))
	cuts, got, err := c.PlanResources(ctx, "c", 100, 30, 1<<40)
	if err != nil || got != seq+1 || cuts[len(cuts)-1].Last != "http://s1/zzz" {
		t.Errorf("PlanResources after a change: seq %d, %v; want %d, ending at the new resource", got, err, seq+1)
	}
}

// cutResources cuts the part after afterURI as PlanResources would without
// a guess, one part at a time: the plain walk the guesses must agree with.
func cutResources(ctx context.Context, c *Catalog, collection, afterURI string, maxEntries int, perRef, budget int64) (int, string, error) {
	k := cutter{q: c.reader, collection: collection, maxEntries: maxEntries, perRef: perRef, budget: budget}
	return k.cut(ctx, afterURI, 0)
}
