package fetch

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/sim"
)

// TestFreshChangesSkipTheCatalog: changes of a baseline that began with
// the collection empty are marked fresh, and their first delivery does
// not ask the catalog what it holds: a fresh change of a URI the catalog
// does hold is fetched again (the cost of skipping the reads), and its
// event changes nothing in the catalog, which recognises the same
// content at the same time.
func TestFreshChangesSkipTheCatalog(t *testing.T) {
	srv := startSim(t, sim.Config{Resources: 3})
	q := startQueue(t)
	store, _ := dirStore(t)
	cat := appliedCatalog(t, q)
	ctx := context.Background()
	changes := simChanges(t, srv)
	publishAll(t, q, changes)
	deps := queueDeps(t, q, store, clientsFor(t, srv))
	deps.Catalog = cat
	runPool(t, testConfig(), deps)
	eventually(t, 20*time.Second, "three events applied", caughtUp(t, q, cat, 3))
	before, err := cat.CountChanges(ctx, testCollection, time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	srv.ResetRequests()

	// The same changes again, fresh, as new messages, declaring only
	// their md5: only the catalog could tell that their bytes are held.
	for i := range changes {
		c := changes[i]
		c.Fresh = true
		c.Hash = resourcesync.Hashes{{Alg: resourcesync.MD5, Value: c.Hash.Get(resourcesync.MD5)}}
		data, _ := json.Marshal(&c)
		if _, err := q.JetStream().Publish(ctx, queue.ChangeSubject(testSource), data); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 20*time.Second, "the fresh changes handled", func() bool {
		return streamMsgs(t, q, queue.StreamChanges) == 0 && len(srv.Requests()) == 3
	})
	eventually(t, 20*time.Second, "their events applied", func() bool {
		last, err := cat.LastApplied(ctx)
		return err == nil && last == uint64(len(events(t, q)))
	})
	n, _, err := cat.CountResources(ctx, testCollection)
	if err != nil || n != 3 {
		t.Errorf("catalog holds %d resources (%v), want 3", n, err)
	}
	after, err := cat.CountChanges(ctx, testCollection, time.Time{}, time.Time{})
	if err != nil || after != before {
		t.Errorf("change log has %d changes after the fresh replay (%v), want %d as before", after, err, before)
	}
	if d := deadLetters(t, q); len(d) != 0 {
		t.Errorf("dead letters: %v", d)
	}
}
