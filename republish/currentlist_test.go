package republish

import (
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// capabilityChangeList is the changelist a collection's Capability List
// names.
func capabilityChangeList(t *testing.T, f *fixture) string {
	t.Helper()
	_, body := f.get(t, "/alpha/capabilitylist.xml")
	rd, err := resourcesync.NewReader(strings.NewReader(string(body)), resourcesync.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	rd.Header()
	for {
		e, err := rd.Next()
		if err != nil {
			t.Fatalf("the Capability List names no changelist")
		}
		if e.MD != nil && e.MD.Capability == resourcesync.CapChangeList {
			return e.Loc
		}
	}
}

// TestCapabilityCurrentChangeList: with capability_changelist "current"
// the Capability List names a Change List, not an index, at a URL that
// stays: it serves the list holding the latest changes, open, and moves
// on when a new period (or piece) begins. By default it names the index.
func TestCapabilityCurrentChangeList(t *testing.T) {
	if got := capabilityChangeList(t, newFixture(t, Config{})); !strings.HasSuffix(got, "/alpha/changelist.xml") {
		t.Fatalf("by default the Capability List names %s, want the Change List Index", got)
	}
	f := newFixture(t, Config{CapabilityChangeList: CapabilityCurrent, ChangeListPeriod: time.Hour, MaxEntries: 100})
	loc := capabilityChangeList(t, f)
	if want := f.srv.cfg.BaseURL + "/alpha/changelist/current.xml"; loc != want {
		t.Fatalf("the Capability List names %s, want %s", loc, want)
	}
	path := strings.TrimPrefix(loc, f.srv.cfg.BaseURL)
	f.logChanges("alpha", base, time.Second, 30)
	h, locs, _ := f.locs(t, path)
	if h.Kind() != resourcesync.KindChangeList || !h.MD.Until.IsZero() || !h.MD.From.Equal(base) || len(locs) != 30 {
		t.Fatalf("current list: %s [%v, %v) with %d changes, want the open Change List from %v with 30", h.Kind(), h.MD.From, h.MD.Until, len(locs), base)
	}
	// More changes than a list holds: the current list is the last piece.
	f.logChanges("alpha", base.Add(time.Minute), time.Second, 100)
	h, locs, _ = f.locs(t, path)
	if !h.MD.Until.IsZero() || h.MD.From.Equal(base) || len(locs) != 30 {
		t.Fatalf("current list after 130 changes: [%v, %v) with %d, want the open last piece with 30", h.MD.From, h.MD.Until, len(locs))
	}
	// A change in the next period: the current list is that period's.
	next := base.Add(2 * time.Hour)
	f.logChanges("alpha", next, time.Second, 1)
	h, locs, _ = f.locs(t, path)
	if !h.MD.From.Equal(next) || !h.MD.Until.IsZero() || len(locs) != 1 {
		t.Fatalf("current list after a new period began: [%v, %v) with %d, want [%v, ) with 1", h.MD.From, h.MD.Until, len(locs), next)
	}
	if _, err := (Config{BaseURL: "http://m.example", Collections: []Collection{{Name: "a"}}, CapabilityChangeList: "latest"}).withDefaults(); err == nil ||
		!strings.Contains(err.Error(), "capability_changelist") {
		t.Errorf("an unknown capability_changelist is accepted: %v", err)
	}
}
