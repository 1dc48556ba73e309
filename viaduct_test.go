package viaduct

import (
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

func TestMsgIDs(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	base := Change{Source: "s", Collection: "c", URI: "http://example.com/res1", Op: resourcesync.Updated, Time: at,
		Hash: resourcesync.Hashes{{Alg: resourcesync.MD5, Value: "1e0d5cb8ef6ba40c99b14c0237be735e"}}}
	id := base.MsgID()
	if len(id) != 26 || id[:4] != "chg-" {
		t.Fatalf("change id %q: want chg- and 22 characters", id)
	}
	same := base
	same.Collection = "other" // not part of what makes a change the same
	same.Time = at.In(time.FixedZone("x", 3600))
	if same.MsgID() != id {
		t.Errorf("the same change gave two ids: %s, %s", id, same.MsgID())
	}
	for name, edit := range map[string]func(*Change){
		"source": func(c *Change) { c.Source = "t" },
		"uri":    func(c *Change) { c.URI += "x" },
		"op":     func(c *Change) { c.Op = resourcesync.Deleted },
		"time":   func(c *Change) { c.Time = at.Add(time.Nanosecond) },
		"hash":   func(c *Change) { c.Hash = nil },
		"moved":  func(c *Change) { c.Source, c.URI = "s|http://example.com/res1", "" },
	} {
		c := base
		edit(&c)
		if c.MsgID() == id {
			t.Errorf("changing the %s kept the id %s", name, id)
		}
	}
	ev := Event{Source: "s", URI: base.URI, Op: resourcesync.Created, SHA256: "ab", Length: 3, Upstream: base}
	eid := ev.MsgID()
	if len(eid) != 26 || eid[:4] != "evt-" {
		t.Fatalf("event id %q: want evt- and 22 characters", eid)
	}
	other := ev
	other.Length = 4
	if other.MsgID() == eid {
		t.Errorf("events of different lengths share the id %s", eid)
	}
}
