package catalog

import (
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// Events of one resource can reach EVENTS in another order than the
// Source made its changes: fetch workers handle changes concurrently and
// a slow fetch publishes late. The catalog, which applies EVENTS in one
// order on every node, therefore orders the statements about a resource
// by the Source's own time, so that every node ends in the state of the
// Source's latest statement whatever order the events arrived in.

// orderOf is the Source time that places ev among the statements about
// its resource: the upstream change time, or the at of the list that
// stated it when that is later (a baseline says the resource was as
// listed at the list's at, whatever its lastmod). Zero when the Source
// stated neither.
func orderOf(ev *viaduct.Event) time.Time {
	t := ev.Upstream.Time
	if ev.Upstream.Listed.After(t) {
		t = ev.Upstream.Listed
	}
	return t
}

// outranked reports whether the statement ev (placed at t by orderOf)
// comes before the one the row h last recorded, and so must not change
// it: an older Source time, or at equal times the lesser statement. At
// equal times a deletion outranks a copy (a resource cannot be changed
// after it is deleted within the same tick of the Source's clock, while
// it can be deleted right after a change), and of two different copies
// the one with the greater sha-256, then type, then length wins: an
// arbitrary rule, but the same on every node and in every order.
// An event or row without a Source time cannot be placed, and is applied
// in EVENTS order.
func outranked(ev *viaduct.Event, t time.Time, h *held) bool {
	if !h.exists || t.IsZero() || h.order.IsZero() {
		return false
	}
	if c := t.Compare(h.order); c != 0 {
		return c < 0
	}
	switch {
	case ev.Op == resourcesync.Deleted:
		return false
	case h.deleted:
		return true
	}
	if ev.SHA256 != h.sha256 {
		return ev.SHA256 < h.sha256
	}
	if ev.Type != h.typ {
		return ev.Type < h.typ
	}
	return ev.Length < h.length
}

// laterOrder is the order a row keeps after an event placed at t is
// applied to it: never earlier than it was, so that an event without a
// Source time does not reopen the row to older statements.
func laterOrder(row, t time.Time) time.Time {
	if t.After(row) {
		return t
	}
	return row
}
