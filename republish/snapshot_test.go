package republish

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// entries reads a document's header and entries.
func (f *fixture) entries(t *testing.T, path string) (*resourcesync.Header, []*resourcesync.Entry) {
	t.Helper()
	resp, body := f.get(t, strings.TrimPrefix(path, f.srv.cfg.BaseURL))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", path, resp.Status)
	}
	rd, err := resourcesync.NewReader(strings.NewReader(string(body)), resourcesync.DefaultLimits())
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	var out []*resourcesync.Entry
	for {
		e, err := rd.Next()
		if err != nil {
			break
		}
		out = append(out, e)
	}
	return rd.Header(), out
}

// heldNow is what the catalog holds of alpha now, by aggregator URI.
func (f *sqliteFixture) heldNow(t *testing.T) map[string]string {
	t.Helper()
	held := map[string]string{}
	err := f.cat.ScanResources(context.Background(), "alpha", "", 0, func(rs *catalog.ResourceState) error {
		u, err := f.srv.ResourceURI("alpha", rs.URI)
		held[u] = rs.SHA256
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return held
}

// TestSlowDestinationOfIndex is a Destination that reads a Resource List
// Index of 1,000 resources and then its ten parts one by one while the
// collection changes between every two reads (updates, deletions and
// creations in every part's range, read or not), then syncs
// incrementally from the index's at with the Change Lists. The parts
// together must be the catalog exactly as it was at the index, each
// saying the index's at, and the Destination must end with exactly what
// the catalog holds: nothing missed, nothing extra.
func TestSlowDestinationOfIndex(t *testing.T) {
	const n = 1000
	f := newSQLiteFixture(t, Config{MaxEntries: 100})
	clock := base
	// The events of a step are applied as one batch, as the node's
	// applier does; lists name blobs without opening them, so none is
	// stored.
	var batch []catalog.Applied
	apply := func(uri, op, body string) {
		clock = clock.Add(time.Millisecond)
		ev := &viaduct.Event{Source: "origin", Collection: "alpha", URI: uri, Op: op, Type: "text/plain",
			Upstream: viaduct.Change{Source: "origin", Collection: "alpha", URI: uri, Op: op}}
		if op != resourcesync.Deleted {
			ev.MD5, ev.SHA256 = sum(body)
			ev.Length = int64(len(body))
		}
		f.seq++
		batch = append(batch, catalog.Applied{Seq: f.seq, At: clock, Event: ev})
	}
	flush := func() {
		t.Helper()
		if err := f.cat.ApplyBatch(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
		batch = batch[:0]
	}
	uri := func(i int) string { return fmt.Sprintf("http://origin.example.com/r%04d", i) }
	for i := range n {
		apply(uri(i), resourcesync.Created, "v1 "+uri(i))
	}
	flush()
	atIndex := f.heldNow(t)
	h, parts := f.entries(t, "/alpha/resourcelist.xml")
	if h.Kind() != resourcesync.KindResourceListIndex || len(parts) != 10 {
		t.Fatalf("index %s with %d parts, want a Resource List Index of 10", h.Kind(), len(parts))
	}
	at := h.MD.At
	if h.MD.Completed.Before(at) {
		t.Errorf("index completed %v before at %v", h.MD.Completed, at)
	}

	dest := map[string]string{}
	for k, p := range parts {
		ph, es := f.entries(t, p.Loc)
		if !ph.MD.At.Equal(at) {
			t.Errorf("part %d: at %v, the index's is %v", k+1, ph.MD.At, at)
		}
		for _, e := range es {
			if _, dup := dest[e.Loc]; dup {
				t.Errorf("part %d lists %s again", k+1, e.Loc)
			}
			dest[e.Loc] = e.MD.Hash.Get(resourcesync.SHA256)
		}
		// Between two reads: in every part's range, one resource
		// updated, one deleted, one created, one created and deleted.
		for j := range 10 {
			i := j*100 + k*7 + 1
			apply(uri(i), resourcesync.Updated, fmt.Sprintf("v%d %s", k+2, uri(i)))
			apply(uri(i+1), resourcesync.Deleted, "")
			apply(uri(i)+"-new", resourcesync.Created, "new "+uri(i))
			apply(uri(i+2)+"-gone", resourcesync.Created, "gone")
			apply(uri(i+2)+"-gone", resourcesync.Deleted, "")
		}
		flush()
	}
	if !maps.Equal(dest, atIndex) {
		t.Errorf("the parts hold %d resources, the catalog held %d at the index; differing: %v",
			len(dest), len(atIndex), differing(dest, atIndex))
	}

	// Incremental sync from the index's at.
	_, lists := f.entries(t, "/alpha/changelist.xml")
	applied := 0
	for _, l := range lists {
		if !l.MD.Until.IsZero() && !l.MD.Until.After(at) {
			continue
		}
		_, es := f.entries(t, l.Loc)
		for _, e := range es {
			if e.MD.DateTime.Before(at) {
				continue
			}
			applied++
			if e.MD.Change == resourcesync.Deleted {
				delete(dest, e.Loc)
			} else {
				dest[e.Loc] = e.MD.Hash.Get(resourcesync.SHA256)
			}
		}
	}
	if applied < 500 {
		t.Errorf("the Change Lists from at gave %d changes, want the 500 made after the index", applied)
	}
	if now := f.heldNow(t); !maps.Equal(dest, now) {
		t.Errorf("after the incremental sync the Destination holds %d resources, the catalog %d; differing: %v",
			len(dest), len(now), differing(dest, now))
	}
}

// differing lists the keys whose values differ between a and b, a few.
func differing(a, b map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(a)) {
		if b[k] != a[k] {
			out = append(out, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(b)) {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	if len(out) > 10 {
		out = append(out[:10], "…")
	}
	return out
}

// TestSnapshotPartUnavailable: a part of a snapshot the catalog has not
// applied yet (a replica behind) answers 503 with Retry-After; one of a
// snapshot older than the change log's retention horizon answers 410, as
// does a Change List before the horizon, where the index now starts.
func TestSnapshotPartUnavailable(t *testing.T) {
	f := newSQLiteFixture(t, Config{MaxEntries: 2})
	apply := func(i int, at time.Time) {
		uri := fmt.Sprintf("http://origin.example.com/r%d", i)
		f.apply(t, at, &viaduct.Event{Source: "origin", Collection: "alpha", URI: uri, Op: resourcesync.Created, Type: "text/plain",
			Upstream: viaduct.Change{Source: "origin", Collection: "alpha", URI: uri, Op: resourcesync.Created}}, []byte(uri))
	}
	for i := range 5 {
		apply(i, base.Add(time.Duration(i)*time.Second))
	}
	_, parts := f.entries(t, "/alpha/resourcelist.xml")
	if len(parts) != 3 || !strings.Contains(parts[0].Loc, "seq=5") {
		t.Fatalf("index parts %v, want 3 naming snapshot 5", parts)
	}
	ahead := strings.TrimPrefix(strings.Replace(parts[0].Loc, "seq=5", "seq=6", 1), f.srv.cfg.BaseURL)
	if resp, _ := f.get(t, ahead); resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("GET %s on a catalog at 5: %s, Retry-After %q; want 503 with Retry-After", ahead, resp.Status, resp.Header.Get("Retry-After"))
	}
	apply(5, base.Add(time.Hour))
	apply(6, base.Add(3*time.Hour))
	horizon := base.Add(2 * time.Hour)
	if _, err := f.cat.Prune(context.Background(), horizon, time.Hour); err != nil {
		t.Fatal(err)
	}
	part := strings.TrimPrefix(parts[1].Loc, f.srv.cfg.BaseURL)
	if resp, _ := f.get(t, part); resp.StatusCode != http.StatusGone {
		t.Errorf("GET %s after the change log was pruned past it: %s, want 410", part, resp.Status)
	}
	// The Change List Index starts at the horizon; a list before it is gone.
	h, lists := f.entries(t, "/alpha/changelist.xml")
	if !h.MD.From.Equal(horizon) || len(lists) == 0 || !lists[0].MD.From.Equal(horizon) {
		t.Errorf("Change List Index from %v, first list %v; want both at the horizon %v", h.MD.From, lists, horizon)
	}
	old := "/alpha/changelist/" + base.Format(periodLayout) + ".xml"
	if resp, _ := f.get(t, old); resp.StatusCode != http.StatusGone {
		t.Errorf("GET %s, before the horizon: %s, want 410", old, resp.Status)
	}
}
