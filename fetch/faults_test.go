package fetch

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/sim"
	"github.com/viaduct-mirror/viaduct/storage"
)

// TestBadCopiesAreDeadLetteredWithEvidence: a wrong declared hash, a wrong
// declared length and a truncated body are retried until the last
// delivery, then dead-lettered with the evidence; nothing of them is
// stored or published, and the good changes around them get through.
func TestBadCopiesAreDeadLetteredWithEvidence(t *testing.T) {
	srv := startSim(t, sim.Config{Resources: 8, MinSize: 2000, MaxSize: 4000})
	for p, f := range map[string]sim.Fault{
		"/res/2": {WrongHash: true},
		"/res/3": {WrongLength: true},
		"/res/4": {Truncate: true},
	} {
		if err := srv.SetFault(p, f); err != nil {
			t.Fatal(err)
		}
	}
	q := startQueue(t)
	store, _ := dirStore(t)
	changes := simChanges(t, srv)
	publishAndRun(t, q, store, srv, changes)

	eventually(t, 30*time.Second, "three dead letters, five events, CHANGES empty", func() bool {
		return len(deadLetters(t, q)) == 3 && len(events(t, q)) == 5 && streamMsgs(t, q, queue.StreamChanges) == 0
	})
	snap := srv.Snapshot()
	wantReason := map[string]string{"/res/2": "mismatch", "/res/3": "mismatch", "/res/4": "truncated"}
	for _, d := range deadLetters(t, q) {
		ev := d.Evidence
		p := resPath(srv, ev["uri"])
		want, ok := wantReason[p]
		if !ok {
			t.Errorf("dead letter for %s (%q), which was good", ev["uri"], d.Reason)
			continue
		}
		if !strings.HasPrefix(d.Reason, want) || d.Delivered != 3 {
			t.Errorf("%s: dead-lettered after %d deliveries as %q, want %s after 3", p, d.Delivered, d.Reason, want)
		}
		for _, k := range []string{"uri", "declared_sha256", "declared_md5", "declared_length", "computed_length", "status"} {
			if ev[k] == "" {
				t.Errorf("%s: evidence lacks %s: %v", p, k, ev)
			}
		}
		if want == "mismatch" && ev["computed_sha256"] != snap[ev["uri"]].SHA256 {
			t.Errorf("%s: computed_sha256 %q, want the bytes' %s", p, ev["computed_sha256"], snap[ev["uri"]].SHA256)
		}
		if n := srv.Requests()[p]; n != 3 {
			t.Errorf("%s fetched %d times, want 3 (one per delivery)", p, n)
		}
	}
	// Only the good copies are in the store: not the bytes that came with
	// a wrong declaration, not half a body.
	var good []string
	for _, ev := range events(t, q) {
		if _, bad := wantReason[resPath(srv, ev.URI)]; bad {
			t.Errorf("event published for bad copy %s", ev.URI)
		}
		good = append(good, ev.SHA256)
	}
	slices.Sort(good)
	if got := blobFiles(t, store); !slices.Equal(got, good) {
		t.Errorf("store holds %v, want only the published %v", got, good)
	}
}

func TestTransientFailureIsRetriedAndStoredOnce(t *testing.T) {
	srv := startSim(t, sim.Config{Resources: 3})
	if err := srv.SetFault("/res/1", sim.Fault{Status: 503, Times: 1}); err != nil {
		t.Fatal(err)
	}
	q := startQueue(t)
	store, _ := dirStore(t)
	changes := simChanges(t, srv)
	publishAndRun(t, q, store, srv, changes)
	checkStored(t, q, store, srv, changes)
	if n := srv.Requests()["/res/1"]; n != 2 {
		t.Errorf("/res/1 requested %d times, want 2 (a 503, then the bitstream)", n)
	}
	if n := len(blobFiles(t, store)); n != 3 {
		t.Errorf("%d blobs, want 3", n)
	}
}

func TestNotFoundIsDeadLetteredAfterAFewTries(t *testing.T) {
	srv := startSim(t, sim.Config{Resources: 2})
	if err := srv.SetFault("/res/2", sim.Fault{Status: 404}); err != nil {
		t.Fatal(err)
	}
	q := startQueue(t)
	store, _ := dirStore(t)
	publishAndRun(t, q, store, srv, simChanges(t, srv))
	eventually(t, 20*time.Second, "a dead letter and an event", func() bool {
		return len(deadLetters(t, q)) == 1 && len(events(t, q)) == 1 && streamMsgs(t, q, queue.StreamChanges) == 0
	})
	d := deadLetters(t, q)[0]
	if !strings.HasPrefix(d.Reason, "not_found") || d.Evidence["status"] != "404" || d.Delivered != 2 {
		t.Errorf("dead letter %q after %d deliveries, evidence %v; want not_found, status 404, 2 deliveries (not_found_attempts)", d.Reason, d.Delivered, d.Evidence)
	}
	if n := srv.Requests()["/res/2"]; n != 2 {
		t.Errorf("/res/2 requested %d times, want 2", n)
	}
}

// TestRefusedChangesAreDeadLetteredAtOnce: a URI outside the Source's
// Policy and a Source this node does not know are never fetched, and
// waiting will not help.
func TestRefusedChangesAreDeadLetteredAtOnce(t *testing.T) {
	srv := startSim(t, sim.Config{Resources: 1})
	q := startQueue(t)
	store, _ := dirStore(t)
	good := simChanges(t, srv)[0]
	foreign := good
	foreign.URI = sim.ForeignLoc
	unknown := good
	unknown.Source = "not-configured"
	publishAndRun(t, q, store, srv, []viaduct.Change{foreign, unknown})
	eventually(t, 20*time.Second, "two dead letters", func() bool {
		return len(deadLetters(t, q)) == 2 && streamMsgs(t, q, queue.StreamChanges) == 0
	})
	reasons := map[string]bool{}
	for _, d := range deadLetters(t, q) {
		if d.Delivered != 1 {
			t.Errorf("%q dead-lettered after %d deliveries, want 1", d.Reason, d.Delivered)
		}
		reasons[strings.SplitN(d.Reason, ":", 2)[0]] = true
	}
	if !reasons["forbidden"] || !reasons["unknown_source"] {
		t.Errorf("reasons %v, want forbidden and unknown_source", reasons)
	}
	if n := len(events(t, q)); n != 0 {
		t.Errorf("%d events, want none", n)
	}
}

// TestStoredBlobIsNotFetchedAgain: a change whose declared sha-256 is
// already in the store is published without a request to the Source,
// with the md5 computed of the stored blob (it was once published
// without, losing the md5 the Source declared).
func TestStoredBlobIsNotFetchedAgain(t *testing.T) {
	srv := startSim(t, sim.Config{Resources: 2})
	q := startQueue(t)
	store, _ := dirStore(t)
	changes := simChanges(t, srv)
	// Store /res/1's bytes first, as an earlier run (or another Source
	// with the same bitstream) would have.
	resp, err := clientsFor(t, srv)(testSource).Get(context.Background(), upstreamReq(changes[0].URI))
	if err != nil {
		t.Fatal(err)
	}
	w, _ := store.Create(context.Background(), storage.Expect{})
	if _, err := copyAll(w, resp.Body); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := w.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv.ResetRequests()

	publishAndRun(t, q, store, srv, changes)
	checkStored(t, q, store, srv, changes)
	if n := srv.Requests()[resPath(srv, changes[0].URI)]; n != 0 {
		t.Errorf("stored bitstream fetched %d times, want 0", n)
	}
	if n := srv.Requests()[resPath(srv, changes[1].URI)]; n != 1 {
		t.Errorf("new bitstream fetched %d times, want 1", n)
	}
}

// TestDuplicateMirrorIsUsedWhenOriginFails: the origin answers 503; the
// mirrors are tried by pri, one refused by the Source's Policy, the next
// one allowed and serving the same bytes.
func TestDuplicateMirrorIsUsedWhenOriginFails(t *testing.T) {
	cfg := sim.Config{Resources: 2, Seed: 11}
	origin, mirror := startSim(t, cfg), startSim(t, cfg)
	if err := origin.SetFault("/res/*", sim.Fault{Status: 503}); err != nil {
		t.Fatal(err)
	}
	q := startQueue(t)
	store, _ := dirStore(t)
	changes := simChanges(t, origin)
	for i := range changes {
		p := resPath(origin, changes[i].URI)
		changes[i].Links = append(changes[i].Links,
			resourcesync.Link{Rel: "duplicate", Href: mirror.URL + p, Pri: 2},
			resourcesync.Link{Rel: "duplicate", Href: "http://elsewhere.example" + p, Pri: 1},
		)
	}
	publishAll(t, q, changes)
	runPool(t, testConfig(), queueDeps(t, q, store, clientsFor(t, origin, mirror.URL)))
	checkStored(t, q, store, origin, changes)
	for _, c := range changes {
		p := resPath(origin, c.URI)
		if o, m := origin.Requests()[p], mirror.Requests()[p]; o != 1 || m != 1 {
			t.Errorf("%s: %d requests to the origin, %d to the mirror; want 1 and 1", p, o, m)
		}
	}
}

func TestCandidatesOrder(t *testing.T) {
	c := &viaduct.Change{URI: "http://o/x", Links: []resourcesync.Link{
		{Rel: "duplicate", Href: "http://none-a/x"},
		{Rel: "describedby", Href: "http://d/x", Pri: 1},
		{Rel: "duplicate", Href: "http://p5/x", Pri: 5},
		{Rel: "duplicate", Href: "http://o/x", Pri: 1},
		{Rel: "duplicate", Href: "http://p2/x", Pri: 2},
		{Rel: "duplicate", Href: "http://none-b/x"},
		{Rel: "duplicate", Href: "http://p2/x", Pri: 3},
	}}
	want := []string{"http://o/x", "http://p2/x", "http://p5/x", "http://none-a/x", "http://none-b/x"}
	if got := candidates(c); !slices.Equal(got, want) {
		t.Errorf("candidates %v, want %v", got, want)
	}
}
