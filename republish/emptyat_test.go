package republish

import (
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// TestEmptyListAtPrecedesChangesToCome: a Destination that reads an empty
// collection's Resource List starts its Change List reading from the
// list's at. Changes already on EVENTS but not yet applied (the applier
// lags, or the node is catching up) carry their EVENTS times, earlier
// than the clock: an at taken from the clock made such a Destination
// skip them for good. The at is the time of the last change applied
// (any collection), and the epoch before any.
func TestEmptyListAtPrecedesChangesToCome(t *testing.T) {
	f := newSQLiteFixture(t, Config{})
	f.srv.now = time.Now
	h, _ := f.entries(t, "/beta/resourcelist.xml")
	if !h.MD.At.Equal(time.Unix(0, 0)) {
		t.Errorf("at of the Resource List of a catalog that applied nothing: %v, want the epoch", h.MD.At)
	}

	now := time.Now().UTC().Truncate(time.Second)
	t1, t2 := now.Add(-10*time.Minute), now.Add(-5*time.Minute)
	f.apply(t, t1, &viaduct.Event{Source: "s", Collection: "alpha", URI: "http://origin.example.com/a", Op: resourcesync.Created,
		Type: "text/plain", Upstream: viaduct.Change{Time: t1}}, []byte("a"))
	h, entries := f.entries(t, "/beta/resourcelist.xml")
	if len(entries) != 0 || !h.MD.At.Equal(t1) {
		t.Fatalf("empty beta lists %d entries at %v, want none at %v (the last change applied)", len(entries), h.MD.At, t1)
	}
	listAt := h.MD.At

	// A change of beta that was on EVENTS at t2 is applied after the read.
	f.apply(t, t2, &viaduct.Event{Source: "s", Collection: "beta", URI: "http://origin.example.com/b", Op: resourcesync.Created,
		Type: "text/plain", Upstream: viaduct.Change{Time: t2}}, []byte("b"))
	_, lists := f.entries(t, "/beta/changelist.xml")
	var changes []*resourcesync.Entry
	for _, l := range lists {
		_, es := f.entries(t, l.Loc)
		changes = append(changes, es...)
	}
	if len(changes) != 1 {
		t.Fatalf("beta's Change Lists hold %d changes, want 1", len(changes))
	}
	if at := changes[0].MD.DateTime; at.Before(listAt) {
		t.Errorf("the change of beta is at %v, before the at %v of the Resource List read before it: a Destination starting from that at misses it", at, listAt)
	}
}
