package fetch

import (
	"context"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/sim"
)

// TestDeletionOvertakesSlowCreation: two workers share CHANGES; the
// creation of a resource is slow to fetch, and its deletion, queued while
// the fetch is under way, is handled before the fetch ends. The deletion's
// event reaches EVENTS first, yet the catalog, fed from EVENTS as a node
// feeds it, ends with the resource deleted: nothing held, nothing listed.
// The Source holds the creation's response until the deletion has been
// applied: a fixed delay made the test depend on how fast a busy machine
// ran the rest (a creation taken up after the deletion was applied is
// rightly skipped as superseded, and its event never came).
func TestDeletionOvertakesSlowCreation(t *testing.T) {
	srv := startSim(t, sim.Config{Resources: 2, MinSize: 500, MaxSize: 1000})
	q := startQueue(t)
	store, _ := dirStore(t)
	cat := appliedCatalog(t, q)

	created := simChanges(t, srv)[0]
	hold := make(chan struct{})
	released := false
	release := func() {
		if !released {
			released = true
			close(hold)
		}
	}
	t.Cleanup(release)
	if err := srv.SetFault(resPath(srv, created.URI), sim.Fault{Hold: hold}); err != nil {
		t.Fatal(err)
	}
	deleted := viaduct.Change{Source: testSource, Collection: testCollection, URI: created.URI,
		Op: resourcesync.Deleted, Time: created.Time.Add(time.Minute)}

	cfg := testConfig()
	cfg.Workers = 2
	deps := queueDeps(t, q, store, clientsFor(t, srv))
	deps.Catalog = cat
	runPool(t, cfg, deps)
	publishAll(t, q, []viaduct.Change{created})
	eventually(t, 20*time.Second, "the creation's fetch under way", func() bool {
		return srv.Requests()[resPath(srv, created.URI)] > 0
	})
	publishAll(t, q, []viaduct.Change{deleted})
	eventually(t, 20*time.Second, "the deletion's event applied", func() bool {
		last, err := cat.LastApplied(context.Background())
		return err == nil && last == 1
	})
	release()
	eventually(t, 20*time.Second, "both changes handled and their events applied", func() bool {
		last, err := cat.LastApplied(context.Background())
		return err == nil && last == 2 && streamMsgs(t, q, queue.StreamChanges) == 0
	})
	evs := events(t, q)
	if len(evs) != 2 || evs[0].Op != resourcesync.Deleted || evs[1].Op != resourcesync.Created {
		t.Fatalf("events %+v, want the deletion first, then the slow creation", evs)
	}
	r, err := cat.Resource(context.Background(), testCollection, created.URI)
	if err != nil || !r.Deleted {
		t.Fatalf("catalog: %+v, %v; want %s deleted", r, err, created.URI)
	}
	if n, _, err := cat.CountResources(context.Background(), testCollection); err != nil || n != 0 {
		t.Errorf("CountResources = %d, %v; want 0", n, err)
	}
	if cat.Outranked() != 1 {
		t.Errorf("Outranked = %d, want the creation's event", cat.Outranked())
	}
	if d := deadLetters(t, q); len(d) != 0 {
		t.Errorf("dead letters: %v", d)
	}
}

// TestChangeBeforeBaselineAtIsSuperseded: a baseline listed a resource at
// its list's at, later than the resource's lastmod; a change of it dated
// between the two is older than the catalog's statement, so the catalog
// would ignore its event. The worker skips it without asking the Source,
// though its time is after the upstream time the catalog recorded.
func TestChangeBeforeBaselineAtIsSuperseded(t *testing.T) {
	srv := startSim(t, sim.Config{Resources: 1})
	q := startQueue(t)
	store, _ := dirStore(t)
	cat := appliedCatalog(t, q)

	listed := simChanges(t, srv)[0]
	listed.Listed = listed.Time.Add(time.Hour)
	publishAll(t, q, []viaduct.Change{listed})
	deps := queueDeps(t, q, store, clientsFor(t, srv))
	deps.Catalog = cat
	runPool(t, testConfig(), deps)
	eventually(t, 20*time.Second, "the baseline's change applied", func() bool {
		last, err := cat.LastApplied(context.Background())
		return err == nil && last == 1
	})
	srv.ResetRequests()

	older := viaduct.Change{Source: testSource, Collection: testCollection, URI: listed.URI, Op: resourcesync.Updated,
		Time: listed.Time.Add(30 * time.Minute),
		Hash: resourcesync.Hashes{{Alg: resourcesync.SHA256, Value: "00000000000000000000000000000000000000000000000000000000000000ff"}}}
	publishAll(t, q, []viaduct.Change{older})
	eventually(t, 20*time.Second, "the older change handled", func() bool {
		return streamMsgs(t, q, queue.StreamChanges) == 0
	})
	if r := srv.Requests(); len(r) != 0 {
		t.Errorf("requests to the Source: %v, want none", r)
	}
	if evs := events(t, q); len(evs) != 1 {
		t.Errorf("%d events, want only the baseline's", len(evs))
	}
	if d := deadLetters(t, q); len(d) != 0 {
		t.Errorf("dead letters: %v", d)
	}
}
