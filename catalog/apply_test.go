package catalog

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

const (
	cr  = resourcesync.Created
	upd = resourcesync.Updated
	del = resourcesync.Deleted
)

// story is a sequence of events with every kind of effect and non-effect.
func story() []*viaduct.Event {
	return []*viaduct.Event{
		1: event("s1", "c", "http://s1/a", cr, "a1"),
		2: event("s1", "c", "http://s1/b", cr, "b1"),
		3: event("s1", "c", "http://s1/a", upd, "a2"),
		4: event("s1", "c", "http://s1/a", upd, "a2"), // same copy: no change
		5: event("s1", "c", "http://s1/b", del, ""),
		6: event("s1", "c", "http://s1/x", del, ""),   // never held: no change
		7: event("s1", "c", "http://s1/b", del, ""),   // already deleted: no change
		8: event("s1", "c", "http://s1/b", upd, "b2"), // not held: logged as created
		9: event("s1", "c", "http://s1/a", cr, "a3"),  // held: logged as updated
	}
}

// logLine is a change as tests compare it.
type logLine struct {
	seq     uint64
	uri, op string
	sha     string
}

func lines(chs []*ChangeRecord) []logLine {
	var out []logLine
	for _, ch := range chs {
		out = append(out, logLine{ch.Seq, ch.URI, ch.Op, ch.SHA256})
	}
	return out
}

func TestApplySequence(t *testing.T) {
	ctx := context.Background()
	c := openTemp(t)
	evs := story()
	for seq := 1; seq < len(evs); seq++ {
		mustApply(t, c, uint64(seq), evs[seq])
	}
	want := []logLine{
		{1, "http://s1/a", cr, sha("a1")},
		{2, "http://s1/b", cr, sha("b1")},
		{3, "http://s1/a", upd, sha("a2")},
		{5, "http://s1/b", del, sha("b1")}, // the copy that went
		{8, "http://s1/b", cr, sha("b2")},
		{9, "http://s1/a", upd, sha("a3")},
	}
	if got := lines(changes(t, c, "c")); !reflect.DeepEqual(got, want) {
		t.Fatalf("change log:\n got %v\nwant %v", got, want)
	}
	if n := lastApplied(t, c); n != 9 {
		t.Fatalf("LastApplied = %d, want 9", n)
	}
	a, err := c.Resource(ctx, "c", "http://s1/a")
	if err != nil {
		t.Fatal(err)
	}
	if a.SHA256 != sha("a3") || a.Length != 2 || a.Deleted || a.Seq != 9 || a.Source != "s1" || a.Origin != "http://s1/a" {
		t.Fatalf("resource a = %+v", a)
	}
	if !a.Changed.Equal(t0.Add(9 * time.Second)) {
		t.Fatalf("resource a changed at %s, want %s", a.Changed, t0.Add(9*time.Second))
	}
	// A deletion of what was never held leaves a tombstone, no copy.
	if x, err := c.Resource(ctx, "c", "http://s1/x"); err != nil || !x.Deleted || x.Seq != 0 || x.SHA256 != "" {
		t.Fatalf("Resource(x) = %+v, %v; want a tombstone", x, err)
	}
	if n, b, err := c.CountResources(ctx, "c"); err != nil || n != 2 || b != 4 {
		t.Fatalf("CountResources = %d, %d, %v; want 2, 4", n, b, err)
	}
	st, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st != (Stats{Resources: 2, Bytes: 4, Changes: 6, Collections: 1, LastApplied: 9}) {
		t.Fatalf("Stats = %+v", st)
	}

	// Redelivery of every old event, even with other contents, changes nothing.
	before := snapshot(t, c)
	for seq := 1; seq <= 9; seq++ {
		mustApply(t, c, uint64(seq), event("s1", "c", fmt.Sprintf("http://s1/r%d", seq), cr, "other"))
	}
	err = c.ApplyBatch(ctx, []Applied{
		{Seq: 4, At: t0, Event: event("s1", "c", "http://s1/a", del, "")},
		{Seq: 9, At: t0, Event: event("s1", "c", "http://s1/b", del, "")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if after := snapshot(t, c); after != before {
		t.Fatalf("redelivery changed the catalog:\nbefore %s\n after %s", before, after)
	}
}

// snapshot renders everything a reader can see of collection c.
func snapshot(t *testing.T, c *Catalog) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	fmt.Fprintf(&b, "last=%d ", lastApplied(t, c))
	for _, ch := range changes(t, c, "c") {
		fmt.Fprintf(&b, "%+v ", *ch)
	}
	err := c.Resources(ctx, "c", "", 0, func(r *Resource) error {
		fmt.Fprintf(&b, "%s %s %d %s|", r.URI, r.SHA256, r.Seq, r.Changed)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "%+v", st)
	return b.String()
}

func TestApplyBatchMatchesOneByOne(t *testing.T) {
	ctx := context.Background()
	one, batched := openTemp(t), openTemp(t)
	evs := story()
	var batch []Applied
	for seq := 1; seq < len(evs); seq++ {
		at := t0.Add(time.Duration(seq) * time.Second)
		if err := one.Apply(ctx, uint64(seq), at, evs[seq]); err != nil {
			t.Fatal(err)
		}
		batch = append(batch, Applied{Seq: uint64(seq), At: at, Event: evs[seq]})
	}
	// A burst that overlaps what was applied: the old part is skipped.
	if err := batched.ApplyBatch(ctx, batch[:4]); err != nil {
		t.Fatal(err)
	}
	if err := batched.ApplyBatch(ctx, batch[2:]); err != nil {
		t.Fatal(err)
	}
	if a, b := snapshot(t, one), snapshot(t, batched); a != b {
		t.Fatalf("batched differs from one by one:\n one %s\nbatch %s", a, b)
	}
}

func TestApplyRefusedBatchAppliesNothing(t *testing.T) {
	ctx := context.Background()
	c := openTemp(t)
	mustApply(t, c, 1, event("s1", "c", "http://s1/a", cr, "a1"))
	bad := event("s1", "c", "http://s1/b", "moved", "b1")
	err := c.ApplyBatch(ctx, []Applied{
		{Seq: 2, At: t0, Event: event("s1", "c", "http://s1/c", cr, "c1")},
		{Seq: 3, At: t0, Event: bad},
	})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("ApplyBatch with op %q: error %v, want ErrInvalid", bad.Op, err)
	}
	if !strings.Contains(err.Error(), "http://s1/b") || !strings.Contains(err.Error(), "event 3") {
		t.Fatalf("error %q does not name the event", err)
	}
	if n := lastApplied(t, c); n != 1 {
		t.Fatalf("LastApplied = %d after refused batch, want 1", n)
	}
	if got := len(changes(t, c, "c")); got != 1 {
		t.Fatalf("change log has %d entries after refused batch, want 1", got)
	}
	if _, err := c.Resource(ctx, "c", "http://s1/c"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("resource of refused batch is visible: %v", err)
	}
	for _, ev := range []*viaduct.Event{
		{Source: "s1", Collection: "c", URI: "http://s1/z", Op: cr},
		{Source: "s1", URI: "http://s1/z", Op: del},
		{Source: "s1", Collection: "c", Op: del},
		nil,
	} {
		if err := c.Apply(ctx, 2, t0, ev); !errors.Is(err, ErrInvalid) {
			t.Errorf("Apply(%+v) error = %v, want ErrInvalid", ev, err)
		}
	}
	// The applier dead-letters the event and moves past it.
	if err := c.Skip(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if err := c.Skip(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if n := lastApplied(t, c); n != 3 {
		t.Fatalf("LastApplied = %d after Skip(3), Skip(2); want 3", n)
	}
}

func TestUpstreamRoundTrip(t *testing.T) {
	ctx := context.Background()
	c := openTemp(t)
	ev := event("s1", "c", "http://s1/a", cr, "a1")
	mod := time.Date(1999, 12, 31, 23, 59, 59, 123456789, time.FixedZone("", 3600))
	ev.Upstream.Modified = mod
	ev.Upstream.Length = nil
	ev.Upstream.Type = "application/xml"
	ev.Upstream.Hash = resourcesync.Hashes{{Alg: "md5", Value: ev.MD5}, {Alg: "sha-256", Value: ev.SHA256}}
	ev.Upstream.Links = []resourcesync.Link{{Rel: "describedby", Href: "http://s1/a.meta", Type: "application/json"}}
	mustApply(t, c, 1, ev)
	r, err := c.Resource(ctx, "c", "http://s1/a")
	if err != nil {
		t.Fatal(err)
	}
	u := r.Upstream
	if !u.Modified.Equal(mod) || !u.Time.Equal(ev.Upstream.Time) || u.Length != nil || u.Type != "application/xml" {
		t.Fatalf("upstream = %+v", u)
	}
	if !reflect.DeepEqual(u.Hash, ev.Upstream.Hash) || !reflect.DeepEqual(u.Links, ev.Upstream.Links) {
		t.Fatalf("upstream hashes/links = %v %+v", u.Hash, u.Links)
	}

	// The same copy again with a newer upstream word: metadata only.
	again := event("s1", "c", "http://s1/a", upd, "a1")
	again.Upstream.Modified = mod.Add(time.Hour)
	mustApply(t, c, 2, again)
	r, err = c.Resource(ctx, "c", "http://s1/a")
	if err != nil {
		t.Fatal(err)
	}
	if !r.Upstream.Modified.Equal(mod.Add(time.Hour)) || r.Seq != 1 || len(changes(t, c, "c")) != 1 {
		t.Fatalf("after a no-change event: upstream modified %s, seq %d, %d changes", r.Upstream.Modified, r.Seq, len(changes(t, c, "c")))
	}
}
