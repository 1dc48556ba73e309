package harvester

import (
	"context"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/sim"
)

// TestUntimedDeletionsApplied is the Source in the 1.0 style that leaves
// lastmod out of its deletions: 115 resources it deleted were once kept
// by the aggregator, their entries skipped for want of a time. Every
// change is queued, in document order, the deletions without a Source
// time and placed after the change before them; the catalog ends as the
// Source is; a later read of the grown list queues only what is new.
func TestUntimedDeletionsApplied(t *testing.T) {
	e := newEnv(t)
	srv := startSim(t, sim.Config{Resources: 400, Seed: 15, TimeForm: sim.Form10, UntimedDeletions: true})
	h, _ := e.harvester(Defaults(), simSource("s", srv))
	sync1(t, h, "s")
	e.apply(e.drain())

	var muts []sim.Change
	muts = append(muts, srv.Update(5)...)
	muts = append(muts, srv.Delete(115)...)
	muts = append(muts, srv.Create(3)...)
	sync1(t, h, "s")
	got := e.drain()
	want := expected(muts)
	if len(got) != len(want) {
		t.Fatalf("queued %d changes, want %d (115 of them deletions without a time)", len(got), len(want))
	}
	var place time.Time
	for i, w := range want {
		g := got[i]
		if g.URI != w.URI || g.Op != w.Op {
			t.Fatalf("change %d: got %s %s, want %s %s: not in document order", i, g.Op, g.URI, w.Op, w.URI)
		}
		if w.Op != resourcesync.Deleted {
			if !g.Time.Equal(w.Time) {
				t.Fatalf("change %d of %s at %s, the Source says %s", i, g.URI, g.Time, w.Time)
			}
			place = w.Time
			continue
		}
		// Placed after the change before it: the last update, else the
		// list's from.
		if !g.Time.IsZero() || g.Listed.IsZero() || (!place.IsZero() && !g.Listed.Equal(place)) {
			t.Fatalf("deletion %d of %s: time %s, placed at %s; want no time, placed at %s", i, g.URI, g.Time, g.Listed, place)
		}
	}
	e.apply(got)
	checkCatalog(t, e, srv)
	cursor, _ := e.cat.Cursor(context.Background(), "s", curChanges)
	if last := muts[len(muts)-1].Time; cursor != last.UTC().Format(time.RFC3339Nano) {
		t.Errorf("cursor %s after the pass, want the last change's time %s", cursor, last.UTC().Format(time.RFC3339Nano))
	}

	// The list grows by one update: only that is queued again.
	more := srv.Update(1)
	sync1(t, h, "s")
	assertChanges(t, e.drain(), more)

	// A list that ends in deletions without a time: they are queued
	// once, not again on the next read of the grown list.
	dels := srv.Delete(4)
	sync1(t, h, "s")
	if got := e.drain(); len(got) != len(dels) {
		t.Fatalf("the trailing deletions without a time: %d changes queued, want %d", len(got), len(dels))
	}
	more = srv.Update(2)
	sync1(t, h, "s")
	assertChanges(t, e.drain(), more)
}

// TestUntimedNotification is a notification without times (Change
// Notification 1.0.1 makes datetime and lastmod optional): its entries
// were once skipped, and the next notification moved the cursor past
// them, so that not even a forced pass brought them back. They are
// queued in document order, placed at the notification's from, and the
// cursor moves no further than that, so a pass over the Change List still
// reads them; the next, timed, notification then moves it on.
func TestUntimedNotification(t *testing.T) {
	e := newEnv(t)
	srv := startSim(t, sim.Config{Resources: 60, Seed: 16})
	h, _ := e.harvester(Defaults(), simSource("s", srv))
	sync1(t, h, "s")
	e.apply(e.drain())
	ctx := context.Background()
	topic := srv.URL + sim.PathTopic

	from := srv.ChangesSince(time.Time{})
	start := time.Now().UTC()
	if n := len(from); n > 0 && !from[n-1].Time.Before(start) {
		start = from[n-1].Time.Add(time.Microsecond)
	}
	first := srv.Mutate(12)
	first = append(first, srv.Delete(3)...)
	untimed := entries(t, srv, first, true)
	if err := push(ctx, h, topic, start, untimed); err != nil {
		t.Fatalf("notification without times: %v", err)
	}
	got := e.drain()
	want := expected(first)
	if len(got) != len(want) {
		t.Fatalf("a notification of %d changes without times queued %d, want %d", len(first), len(got), len(want))
	}
	for i, w := range want {
		if g := got[i]; g.URI != w.URI || g.Op != w.Op || !g.Time.IsZero() || !g.Listed.Equal(start) {
			t.Fatalf("change %d: got %s %s time %s placed %s, want %s %s without a time, placed at the notification's from %s",
				i, g.Op, g.URI, g.Time, g.Listed, w.Op, w.URI, start)
		}
	}
	cursor, _ := e.cat.Cursor(ctx, "s", curChanges)
	if ct, err := resourcesync.ParseTime(cursor); err != nil || ct.After(first[0].Time) {
		t.Fatalf("cursor %s after a notification without times: it moved past the changes it carried (first at %s)", cursor, first[0].Time)
	}
	e.apply(got)

	// A forced pass reads the Change List from the cursor: the same
	// changes, now with times, are there to be queued (and are no-ops
	// downstream); nothing is lost.
	sync1(t, h, "s")
	assertChanges(t, e.drain(), expected(first))

	second := srv.Update(4)
	if err := push(ctx, h, topic, first[len(first)-1].Time.Add(time.Microsecond), entries(t, srv, second, false)); err != nil {
		t.Fatalf("timed notification: %v", err)
	}
	got = e.drain()
	assertChanges(t, got, expected(second))
	e.apply(got)
	checkCatalog(t, e, srv)
}

// entries are the notification entries of cs as the Source writes them,
// without their times when untimed.
func entries(t *testing.T, srv *simServer, cs []sim.Change, untimed bool) []*resourcesync.Entry {
	t.Helper()
	out := make([]*resourcesync.Entry, 0, len(cs))
	for _, c := range cs {
		e, err := srv.Entry(c)
		if err != nil {
			t.Fatal(err)
		}
		if untimed {
			e.LastMod, e.MD.DateTime = time.Time{}, time.Time{}
		}
		out = append(out, &e)
	}
	return out
}

// push hands a notification from from to the Source's pass as a
// consecutive notification is: entries queued, cursor moved.
func push(ctx context.Context, h *Harvester, topic string, from time.Time, es []*resourcesync.Entry) error {
	s := h.sources["s"]
	s.mu.Lock()
	defer s.mu.Unlock()
	ps := h.newPass(s)
	if err := ps.loadState(ctx); err != nil {
		return err
	}
	return ps.pushed(ctx, topic, from, es, true)
}

// checkCatalog checks that the catalog holds the Source's state: every
// live resource with its sha-256, every deleted one deleted.
func checkCatalog(t *testing.T, e *env, srv *simServer) {
	t.Helper()
	ctx := context.Background()
	for uri, it := range srv.Snapshot() {
		r, err := e.cat.Resource(ctx, "s", uri)
		switch {
		case err != nil && !it.Deleted:
			t.Fatalf("catalog has no %s: %v", uri, err)
		case err != nil:
		case it.Deleted != r.Deleted:
			t.Fatalf("catalog has %s deleted=%v, the Source deleted=%v", uri, r.Deleted, it.Deleted)
		case !it.Deleted && r.SHA256 != it.SHA256:
			t.Fatalf("catalog has %s as %s, the Source %s", uri, r.SHA256, it.SHA256)
		}
	}
}
