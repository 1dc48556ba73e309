package harvester

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/sim"
	"github.com/viaduct-mirror/viaduct/upstream"
)

// TestNoChangeListDeletions keeps a Source without Change Lists in sync by
// repeated baselines, deletions included.
func TestNoChangeListDeletions(t *testing.T) {
	e := newEnv(t)
	srv := startSim(t, sim.Config{Resources: 300, Seed: 5, NoChangeLists: true})
	h, _ := e.harvester(Defaults(), simSource("s", srv))
	sync1(t, h, "s")
	e.apply(e.drain())

	deleted := srv.Delete(7)
	updated := srv.Update(3)
	sync1(t, h, "s")
	got := e.drain()
	ops := map[string]string{}
	for _, c := range got {
		ops[c.URI] = c.Op
	}
	if len(got) != 10 {
		t.Fatalf("second baseline queued %d changes, want 10: %v", len(got), ops)
	}
	for _, c := range deleted {
		if ops[c.URI] != resourcesync.Deleted {
			t.Fatalf("%s was deleted at the Source, queued %q", c.URI, ops[c.URI])
		}
	}
	for _, c := range updated {
		if ops[c.URI] != resourcesync.Updated {
			t.Fatalf("%s was updated at the Source, queued %q", c.URI, ops[c.URI])
		}
	}
	e.apply(got)
	sync1(t, h, "s")
	if got := e.drain(); len(got) != 0 {
		t.Fatalf("third baseline queued %d changes, want none", len(got))
	}
}

// TestFailingDocument: a 404 or 5xx on a document fails the pass with an
// error naming the Source and the URI; other Sources still sync.
func TestFailingDocument(t *testing.T) {
	for _, status := range []int{404, 503} {
		t.Run(strings.TrimSpace(string(rune('0'+status/100)))+"xx", func(t *testing.T) {
			e := newEnv(t)
			bad := startSim(t, sim.Config{Resources: 10, Seed: 1})
			good := startSim(t, sim.Config{Resources: 20, Seed: 2})
			h, _ := e.harvester(Defaults(), simSource("bad", bad), simSource("good", good))
			if err := bad.SetFault(sim.PathResourceList, sim.Fault{Status: status}); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			err := h.SyncOnce(ctx, "bad")
			if err == nil {
				t.Fatal("pass over a Source whose Resource List fails succeeded")
			}
			if !strings.Contains(err.Error(), "bad") || !strings.Contains(err.Error(), bad.URL+sim.PathResourceList) {
				t.Fatalf("error does not name the Source and URI: %v", err)
			}
			var ue *upstream.Error
			if !errors.As(err, &ue) {
				t.Fatalf("error does not carry the upstream error: %v", err)
			}
			sync1(t, h, "good")
			if got := e.drain(); len(got) != 20 {
				t.Fatalf("good Source queued %d changes, want 20", len(got))
			}
			if counter(t, h, "passes", "bad", "error") != 1 || counter(t, h, "errors", "bad", kindFetch) == 0 {
				t.Fatal("failed pass not counted")
			}
			// Once the Source recovers, its baseline is done.
			bad.ClearFaults()
			sync1(t, h, "bad")
			if got := e.drain(); len(got) != 10 {
				t.Fatalf("recovered Source queued %d changes, want 10", len(got))
			}
		})
	}
}

// TestNonChronological reads a Change List out of order (Hyrax lists
// newest first) as sorted by change time: every change is queued, in
// time order, the document is counted once as tolerated and shown on the
// status page.
func TestNonChronological(t *testing.T) {
	e := newEnv(t)
	srv := startSim(t, sim.Config{Resources: 50, Seed: 9})
	h, _ := e.harvester(Defaults(), simSource("s", srv))
	sync1(t, h, "s")
	e.apply(e.drain())
	ctx := context.Background()

	muts := srv.Mutate(10)
	if err := srv.SetFault("/changelist-*.xml", sim.Fault{NonChronological: true}); err != nil {
		t.Fatal(err)
	}
	sync1(t, h, "s")
	assertChanges(t, e.drain(), expected(muts))
	if n := counterVec(t, h.m.tolerated, "s", tolOutOfOrder); n != 1 {
		t.Fatalf("out-of-order list counted %v times, want once", n)
	}
	st, _ := h.SourceStatus(ctx, "s")
	if len(st.Warnings) != 1 || st.Warnings[0].Kind != tolOutOfOrder || st.Warnings[0].Document != srv.URL+"/changelist-0.xml" {
		t.Fatalf("status warnings %+v, want the out-of-order Change List", st.Warnings)
	}
}

// TestLocOutsidePolicy: entries whose loc is outside the Source's
// authority or on a private address are not queued; the rest are.
func TestLocOutsidePolicy(t *testing.T) {
	for _, loc := range []string{sim.ForeignLoc, sim.PrivateLoc} {
		t.Run(loc, func(t *testing.T) {
			e := newEnv(t)
			srv := startSim(t, sim.Config{Resources: 30, Seed: 4})
			if err := srv.SetFault(sim.PathResourceList, sim.Fault{ExtraLoc: loc}); err != nil {
				t.Fatal(err)
			}
			if err := srv.SetFault("/changelist-*.xml", sim.Fault{ExtraLoc: loc}); err != nil {
				t.Fatal(err)
			}
			h, _ := e.harvester(Defaults(), simSource("s", srv))
			sync1(t, h, "s")
			base := e.drain()
			if len(base) != 30 {
				t.Fatalf("baseline queued %d changes, want 30", len(base))
			}
			e.apply(base)
			muts := srv.Mutate(5)
			sync1(t, h, "s")
			assertChanges(t, e.drain(), expected(muts))
			if n := counter(t, h, "errors", "s", kindForbiddenLoc); n < 2 {
				t.Fatalf("forbidden locs counted %v times, want at least 2", n)
			}
		})
	}
}

// TestSlowSource: a Source slower than the request timeout fails the pass
// with a transient error naming it. Its Capability List never answers
// while the test watches: a pass not bounded by the timeouts would wait
// for the release a minute later and succeed.
func TestSlowSource(t *testing.T) {
	e := newEnv(t)
	srv := startSim(t, sim.Config{Resources: 10, Seed: 6})
	unanswered := make(chan struct{})
	if err := srv.SetFault(sim.PathCapabilities, sim.Fault{Hold: unanswered}); err != nil {
		t.Fatal(err)
	}
	watchdog := time.AfterFunc(time.Minute, func() { close(unanswered) })
	defer func() {
		if watchdog.Stop() {
			close(unanswered)
		}
	}()
	h, _ := e.harvester(Defaults(), simSource("s", srv))
	err := h.SyncOnce(context.Background(), "s")
	if err == nil || !upstream.IsTransient(err) {
		t.Fatalf("pass over a slow Source: %v, want a transient failure", err)
	}
	if !strings.Contains(err.Error(), "s") || !strings.Contains(err.Error(), sim.PathCapabilities) {
		t.Fatalf("error does not name the Source and URI: %v", err)
	}
}
