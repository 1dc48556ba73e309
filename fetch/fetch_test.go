package fetch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/sim"
	"github.com/viaduct-mirror/viaduct/storage"
)

func TestFetchStoresVerifiesAndPublishes(t *testing.T) {
	srv := startSim(t, sim.Config{Resources: 12, MinSize: 100, MaxSize: 6000})
	q := startQueue(t)
	store, _ := dirStore(t)
	changes := simChanges(t, srv)
	publishAndRun(t, q, store, srv, changes)

	checkStored(t, q, store, srv, changes)
	if got := blobFiles(t, store); len(got) != len(changes) {
		t.Errorf("%d blobs in the store, want %d", len(got), len(changes))
	}
	for _, c := range changes {
		if n := srv.Requests()[resPath(srv, c.URI)]; n != 1 {
			t.Errorf("%s fetched %d times, want 1", c.URI, n)
		}
	}
}

// checkStored waits until every change has its event and CHANGES is
// empty, then checks each event and blob against what the Source serves,
// md5 included: an event published from a blob already stored carries
// the md5 computed of it.
func checkStored(t *testing.T, q *queue.Queue, store storage.Blobs, srv *sim.Server, changes []viaduct.Change) {
	t.Helper()
	eventually(t, 30*time.Second, "every change published and acked", func() bool {
		return len(events(t, q)) == len(changes) && streamMsgs(t, q, queue.StreamChanges) == 0
	})
	checkEvents(t, q, store, srv, changes)
	if d := deadLetters(t, q); len(d) != 0 {
		t.Errorf("%d dead letters, want none: first %q", len(d), d[0].Reason)
	}
}

// checkEvents checks the event and the blob of each change.
func checkEvents(t *testing.T, q *queue.Queue, store storage.Blobs, srv *sim.Server, changes []viaduct.Change) {
	t.Helper()
	snap := srv.Snapshot()
	byURI := map[string]viaduct.Event{}
	for _, ev := range events(t, q) {
		byURI[ev.URI] = ev
	}
	for _, c := range changes {
		ev, ok := byURI[c.URI]
		want := snap[c.URI]
		switch {
		case !ok:
			t.Errorf("no event for %s", c.URI)
			continue
		case ev.SHA256 != want.SHA256 || ev.MD5 != want.MD5 || ev.Length != want.Length:
			t.Errorf("event for %s: sha256 %s md5 %s length %d, want %s %s %d", c.URI, ev.SHA256, ev.MD5, ev.Length, want.SHA256, want.MD5, want.Length)
		case ev.Op != c.Op || ev.Source != testSource || ev.Collection != testCollection || ev.Upstream.URI != c.URI || !ev.Upstream.Time.Equal(c.Time):
			t.Errorf("event for %s does not carry its change: %+v", c.URI, ev)
		case ev.Type != sim.ContentType:
			t.Errorf("event for %s: type %q, want %q", c.URI, ev.Type, sim.ContentType)
		}
		b, err := store.Open(context.Background(), want.SHA256)
		if err != nil {
			t.Errorf("blob of %s: %v", c.URI, err)
			continue
		}
		h := sha256.New()
		n, err := io.Copy(h, b)
		b.Close()
		if err != nil || n != want.Length || hex.EncodeToString(h.Sum(nil)) != want.SHA256 {
			t.Errorf("blob of %s: %d bytes hashing to %x (err %v), want %d bytes, %s", c.URI, n, h.Sum(nil), err, want.Length, want.SHA256)
		}
	}
}
