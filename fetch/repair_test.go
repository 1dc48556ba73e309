package fetch

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/sim"
	"github.com/viaduct-mirror/viaduct/storage"
)

// TestRepairFetchesWhatIsHeld: a change marked as the repair of a copy
// whose blob was quarantined is fetched from the Source although the
// catalog holds the resource with that very content (a plain replay of
// the change is skipped as held), the blob is back under its key, and no
// event is published: the catalog's record is already right.
func TestRepairFetchesWhatIsHeld(t *testing.T) {
	srv := startSim(t, sim.Config{Resources: 2})
	q := startQueue(t)
	store, _ := dirStore(t)
	cat := appliedCatalog(t, q)
	ctx := context.Background()
	changes := simChanges(t, srv)
	publishAll(t, q, changes)
	deps := queueDeps(t, q, store, clientsFor(t, srv))
	deps.Catalog = cat
	runPool(t, testConfig(), deps)
	eventually(t, 20*time.Second, "two events applied", caughtUp(t, q, cat, 2))
	evs := len(events(t, q))

	c := changes[0]
	key := c.Hash.Get(resourcesync.SHA256)
	if _, err := store.Quarantine(ctx, key); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Stat(ctx, key); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("blob still there after quarantine: %v", err)
	}
	srv.ResetRequests()
	c.Op, c.Repair = resourcesync.Updated, key // as the fixity audit asks
	if err := q.PublishChange(ctx, &c); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the repair handled", func() bool {
		return streamMsgs(t, q, queue.StreamChanges) == 0 && len(srv.Requests()) == 1
	})
	if _, err := store.Stat(ctx, key); err != nil {
		t.Errorf("blob %s not back after its repair: %v", key, err)
	}
	if n := len(events(t, q)); n != evs {
		t.Errorf("EVENTS holds %d events after the repair, %d before; a repair restoring the same bytes publishes none", n, evs)
	}
	if d := deadLetters(t, q); len(d) != 0 {
		t.Errorf("dead letters: %v", d)
	}
}
