package fetch

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/sim"
)

// TestCrashBetweenPublishAndAck: a worker stores and publishes, then dies
// before acking. The change comes back to another pool; it finds the blob,
// publishes the same event again and acks: two events in EVENTS (events
// carry no de-duplication id), one GET to the Source, and one change in
// the change log of a catalog that applies both, as a Destination reads it.
func TestCrashBetweenPublishAndAck(t *testing.T) {
	srv := startSim(t, sim.Config{Resources: 1})
	q := startQueue(t, func(c *queue.Config) { c.AckWait = time.Second })
	store, _ := dirStore(t)
	changes := simChanges(t, srv)
	publishAll(t, q, changes)

	crashed := make(chan struct{})
	deps := queueDeps(t, q, store, clientsFor(t, srv))
	deps.Events = &crashingEvents{Queue: q, after: func(*viaduct.Event) bool {
		close(crashed)
		return true
	}}
	_, stop := runPool(t, testConfig(), deps)
	select {
	case <-crashed:
	case <-time.After(20 * time.Second):
		t.Fatal("the first pool never published")
	}
	stop()
	if n := len(events(t, q)); n != 1 {
		t.Fatalf("%d events after the crash, want 1", n)
	}
	if n := streamMsgs(t, q, queue.StreamChanges); n != 1 {
		t.Fatalf("%d changes queued after the crash, want the unacked one", n)
	}

	runPool(t, testConfig(), queueDeps(t, q, store, clientsFor(t, srv)))
	eventually(t, 30*time.Second, "the change published again and acked", func() bool {
		return len(events(t, q)) == 2 && streamMsgs(t, q, queue.StreamChanges) == 0
	})
	// Both events are the Source's change, md5 included.
	checkEvents(t, q, store, srv, changes)
	evs := events(t, q)
	if a, b := evs[0], evs[1]; a.URI != b.URI || a.SHA256 != b.SHA256 || a.MD5 != b.MD5 || a.Length != b.Length || a.Op != b.Op {
		t.Errorf("the event published again differs: %+v, then %+v", a, b)
	}
	if n := srv.Requests()[resPath(srv, changes[0].URI)]; n != 1 {
		t.Errorf("bitstream fetched %d times, want 1", n)
	}
	cat := appliedCatalog(t, q)
	eventually(t, 20*time.Second, "both events applied", func() bool {
		last, err := cat.LastApplied(context.Background())
		return err == nil && last == 2
	})
	var logged []string
	err := cat.Changes(context.Background(), testCollection, 0, 0, func(c *catalog.ChangeRecord) error {
		logged = append(logged, c.URI)
		return nil
	})
	if err != nil || len(logged) != 1 || logged[0] != changes[0].URI {
		t.Errorf("change log %v, %v; want the one change of %s", logged, err, changes[0].URI)
	}
}

// TestCatalogSkipsReplaysAndRecordsDeletions runs the workers with the
// node's catalog, kept up to date from EVENTS as a node does.
func TestCatalogSkipsReplaysAndRecordsDeletions(t *testing.T) {
	srv := startSim(t, sim.Config{Resources: 3})
	q := startQueue(t)
	store, _ := dirStore(t)
	cat := appliedCatalog(t, q)

	changes := simChanges(t, srv)
	publishAll(t, q, changes)
	deps := queueDeps(t, q, store, clientsFor(t, srv))
	deps.Catalog = cat
	runPool(t, testConfig(), deps)
	eventually(t, 20*time.Second, "three events applied", caughtUp(t, q, cat, 3))
	srv.ResetRequests()

	// A replay past the queue's duplicate window: same change, new message.
	for i := range changes {
		data, _ := json.Marshal(&changes[i])
		if _, err := q.JetStream().Publish(context.Background(), queue.ChangeSubject(testSource), data); err != nil {
			t.Fatal(err)
		}
	}
	// An older change of a resource the catalog has a later change of.
	stale := changes[2]
	stale.Time = stale.Time.Add(-time.Hour)
	stale.Hash = resourcesync.Hashes{{Alg: resourcesync.SHA256, Value: "00000000000000000000000000000000000000000000000000000000000000ff"}}
	// A new URI whose declared md5 is a copy the catalog holds.
	snap := srv.Snapshot()
	held := snap[changes[1].URI]
	l := held.Length
	same := viaduct.Change{Source: testSource, Collection: testCollection, URI: srv.URL + "/res/999", Op: resourcesync.Created,
		Time: srv.Epoch(), Hash: resourcesync.Hashes{{Alg: resourcesync.MD5, Value: held.MD5}}, Length: &l}
	// A deletion of a held resource and one of a never-held one.
	del := viaduct.Change{Source: testSource, Collection: testCollection, URI: changes[0].URI, Op: resourcesync.Deleted, Time: srv.Epoch().Add(time.Minute)}
	never := del
	never.URI = srv.URL + "/res/12345"
	publishAll(t, q, []viaduct.Change{stale, same, del, never})

	// The deletion of a never-held resource has its event too: the
	// catalog keeps it as a tombstone, in case its creation comes later.
	eventually(t, 20*time.Second, "three more events applied", caughtUp(t, q, cat, 6))
	if r := srv.Requests(); len(r) != 0 {
		t.Errorf("requests to the Source: %v, want none", r)
	}
	evs := events(t, q)
	byURI := map[string]viaduct.Event{}
	for _, ev := range evs[3:] {
		byURI[ev.URI] = ev
	}
	if ev, ok := byURI[same.URI]; !ok || ev.SHA256 != held.SHA256 || ev.MD5 != held.MD5 || ev.Length != held.Length {
		t.Errorf("event for a copy held by hash: %+v, want sha256 %s md5 %s", ev, held.SHA256, held.MD5)
	}
	gone := snap[changes[0].URI]
	if ev, ok := byURI[del.URI]; !ok || ev.Op != resourcesync.Deleted || ev.SHA256 != gone.SHA256 || ev.MD5 != gone.MD5 || ev.Length != gone.Length {
		t.Errorf("deletion event %+v, want the last copy's hashes %s %s %d", ev, gone.SHA256, gone.MD5, gone.Length)
	}
	if ev, ok := byURI[never.URI]; !ok || ev.Op != resourcesync.Deleted || ev.SHA256 != "" {
		t.Errorf("deletion event of a never-held resource %+v, want one without hashes", ev)
	}
	if r, err := cat.Resource(context.Background(), testCollection, never.URI); err != nil || !r.Deleted || r.Seq != 0 {
		t.Errorf("catalog row of a never-held deletion: %+v, %v; want a tombstone", r, err)
	}
	if d := deadLetters(t, q); len(d) != 0 {
		t.Errorf("dead letters: %v", d)
	}
}

// TestCrashInTheMiddleOfABaseline: the workers of a node die one by one
// in the middle of a baseline, some between storing a blob and publishing
// its event, some between publishing and acknowledging, as a kill -9
// leaves them. Another pool on the same queue, store and catalog finishes
// the work. Every resource then holds the hashes the Source declared in
// its list, md5 included: a change finding its blob already stored once
// published no md5 at all, and the republished entry carried only its
// sha-256 (one in each of three such runs).
func TestCrashInTheMiddleOfABaseline(t *testing.T) {
	srv := startSim(t, sim.Config{Resources: 80, Seed: 21, MinSize: 16, MaxSize: 2048})
	q := startQueue(t, func(c *queue.Config) { c.AckWait = time.Second })
	store, _ := dirStore(t)
	cat := appliedCatalog(t, q)
	changes := simChanges(t, srv)
	for i := range changes {
		if changes[i].Hash.Get(resourcesync.MD5) == "" {
			t.Fatalf("the Source declares no md5 for %s: the test needs it in the list", changes[i].URI)
		}
	}
	publishAll(t, q, changes)

	cfg := testConfig()
	deps := queueDeps(t, q, store, clientsFor(t, srv))
	deps.Catalog = cat
	var commits, publishes, crashes atomic.Int32
	crashed := make(chan struct{}, cfg.Workers)
	crash := func() bool {
		crashes.Add(1)
		// A crashed completion holds its slot; the workers go on until
		// every slot is held: the channel counts only the first ones.
		select {
		case crashed <- struct{}{}:
		default:
		}
		return true
	}
	crashing := deps
	crashing.Events = &crashingEvents{Queue: q,
		before: func(*viaduct.Event) bool { n := commits.Add(1); return n > 10 && n%2 == 1 && crash() },
		after:  func(*viaduct.Event) bool { n := publishes.Add(1); return n > 10 && n%2 == 0 && crash() },
	}
	p, err := New(cfg, crashing, testLogger(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- p.Run(context.Background()) }()
	for range cfg.Workers {
		select {
		case <-crashed:
		case <-time.After(60 * time.Second):
			t.Fatalf("only %d of %d workers crashed", crashes.Load(), cfg.Workers)
		}
	}
	p.Close()
	if err := <-errc; err != nil {
		t.Fatalf("pool run: %v", err)
	}
	published := map[string]bool{}
	for _, ev := range events(t, q) {
		published[ev.SHA256] = true
	}
	orphans := 0
	for _, key := range blobFiles(t, store) {
		if !published[key] {
			orphans++
		}
	}
	if orphans == 0 {
		t.Fatalf("the crashes left no blob stored without its event: the test missed its case")
	}

	runPool(t, testConfig(), deps)
	eventually(t, 60*time.Second, "every change applied after the crash", func() bool {
		n, _, err := cat.CountResources(context.Background(), testCollection)
		return err == nil && n == len(changes) && streamMsgs(t, q, queue.StreamChanges) == 0
	})
	snap := srv.Snapshot()
	for _, c := range changes {
		r, err := cat.Resource(context.Background(), testCollection, c.URI)
		want := snap[c.URI]
		switch {
		case err != nil:
			t.Errorf("%s: %v", c.URI, err)
		case r.SHA256 != c.Hash.Get(resourcesync.SHA256) || r.MD5 != c.Hash.Get(resourcesync.MD5) || r.Length != want.Length:
			t.Errorf("%s is held as sha-256 %s md5 %q length %d; the Source declared %s, %d", c.URI, r.SHA256, r.MD5, r.Length, c.Hash, want.Length)
		}
	}
	if d := deadLetters(t, q); len(d) != 0 {
		t.Errorf("dead letters: %v", d)
	}
}
