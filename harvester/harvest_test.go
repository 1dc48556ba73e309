package harvester

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/sim"
)

// TestBaselineThenChanges harvests a Source of a few thousand resources
// from its baseline, then follows its Change Lists, in both time forms.
func TestBaselineThenChanges(t *testing.T) {
	for _, form := range []string{sim.Form10, sim.Form11} {
		t.Run(form, func(t *testing.T) {
			e := newEnv(t)
			srv := startSim(t, sim.Config{Resources: 3000, Seed: 7, TimeForm: form, PartSize: 1000})
			h, _ := e.harvester(Defaults(), simSource("s", srv))

			sync1(t, h, "s")
			base := e.drain()
			if len(base) != 3000 {
				t.Fatalf("baseline queued %d changes, want 3000", len(base))
			}
			snap := srv.Snapshot()
			seen := map[string]bool{}
			for _, c := range base {
				if c.Op != resourcesync.Created || c.Source != "s" || c.Collection != "s" || c.Doc == "" {
					t.Fatalf("baseline change %+v", c)
				}
				item, ok := snap[c.URI]
				if !ok || seen[c.URI] {
					t.Fatalf("baseline change of %s: in Source %v, seen before %v", c.URI, ok, seen[c.URI])
				}
				seen[c.URI] = true
				if c.Hash.Get(resourcesync.SHA256) != item.SHA256 || c.Length == nil || *c.Length != item.Length {
					t.Fatalf("baseline change of %s: hash %s length %v, Source has %s %d", c.URI, c.Hash, c.Length, item.SHA256, item.Length)
				}
			}
			if n := len(e.pub.take()); n != 3000 {
				t.Fatalf("baseline attempted %d publishes, want 3000", n)
			}
			// Queued in batches, never across a Resource List's end.
			if want := 3 * ((1000 + publishBatchSize - 1) / publishBatchSize); e.pub.batches != want {
				t.Fatalf("baseline queued %d batches, want %d", e.pub.batches, want)
			}
			e.apply(base)

			var muts []sim.Change
			muts = append(muts, srv.Create(5)...)
			muts = append(muts, srv.Mutate(40)...)
			muts = append(muts, srv.Delete(5)...)
			muts = append(muts, srv.Update(10)...)
			sync1(t, h, "s")
			got := e.drain()
			want := expected(muts)
			assertChanges(t, got, want)
			if n := len(e.pub.take()); n != len(want) {
				t.Fatalf("incremental pass attempted %d publishes, want %d", n, len(want))
			}
			e.apply(got)

			// Nothing new: nothing queued, and the Change Lists answer 304.
			srv.takeStatuses()
			sync1(t, h, "s")
			if got := e.drain(); len(got) != 0 {
				t.Fatalf("quiet pass queued %d changes", len(got))
			}
			if n := len(e.pub.take()); n != 0 {
				t.Fatalf("quiet pass attempted %d publishes", n)
			}
			st := srv.takeStatuses()
			if s := st[sim.PathChangeList]; len(s) != 1 || s[0] != http.StatusNotModified {
				t.Fatalf("Change List Index answered %v on the quiet pass, want one 304", s)
			}
			if s := st["/changelist-0.xml"]; len(s) != 1 || s[0] != http.StatusNotModified {
				t.Fatalf("open Change List answered %v on the quiet pass, want one 304", s)
			}
			if _, ok := st[sim.PathResourceList]; ok {
				t.Fatalf("quiet pass read the Resource List again: %v", st)
			}
		})
	}
}

// assertChanges compares queued changes with the Source's own record.
func assertChanges(t *testing.T, got []*viaduct.Change, want []sim.Change) {
	t.Helper()
	if len(got) != len(want) {
		for _, c := range got {
			t.Logf("got  %s %s %s", c.Op, c.URI, c.Time)
		}
		for _, c := range want {
			t.Logf("want %s %s %s", c.Op, c.URI, c.Time)
		}
		t.Fatalf("queued %d changes, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.URI != w.URI || g.Op != w.Op || !g.Time.Equal(w.Time) {
			t.Fatalf("change %d: got %s %s at %s, want %s %s at %s", i, g.Op, g.URI, g.Time, w.Op, w.URI, w.Time)
		}
		if w.Op != resourcesync.Deleted && g.Hash.Get(resourcesync.SHA256) != w.SHA256 {
			t.Fatalf("change %d of %s: hash %s, want sha-256 %s", i, g.URI, g.Hash, w.SHA256)
		}
	}
}

func TestRestartContinuesFromCursor(t *testing.T) {
	e := newEnv(t)
	srv := startSim(t, sim.Config{Resources: 200, Seed: 3})
	h1, _ := e.harvester(Defaults(), simSource("s", srv))
	sync1(t, h1, "s")
	e.apply(e.drain())
	first := srv.Mutate(30)
	sync1(t, h1, "s")
	e.apply(e.drain())
	h1.Close()
	e.pub.take()

	// A new Harvester on the same catalog: nothing is queued again, and
	// new changes are picked up from the cursor.
	h2, _ := e.harvester(Defaults(), simSource("s", srv))
	sync1(t, h2, "s")
	if got := e.drain(); len(got) != 0 {
		t.Fatalf("restarted harvester queued %d changes again", len(got))
	}
	if n := len(e.pub.take()); n != 0 {
		t.Fatalf("restarted harvester attempted %d publishes", n)
	}
	second := srv.Mutate(20)
	sync1(t, h2, "s")
	got := e.drain()
	assertChanges(t, got, expected(second))
	attempted := e.pub.take()
	if len(attempted) != len(expected(second)) {
		t.Fatalf("attempted %d publishes, want %d", len(attempted), len(expected(second)))
	}
	old := map[string]bool{}
	for _, c := range first {
		old[fmt.Sprint(c.URI, c.Op, c.Time.UnixNano())] = true
	}
	for _, c := range attempted {
		if old[fmt.Sprint(c.URI, c.Op, c.Time.UnixNano())] {
			t.Fatalf("change %s %s at %s queued again after restart", c.Op, c.URI, c.Time)
		}
	}
}
