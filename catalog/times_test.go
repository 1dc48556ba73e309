package catalog

import (
	"context"
	"fmt"
	"testing"
	"time"
)

func TestChangeTimesStrictlyIncreasing(t *testing.T) {
	ctx := context.Background()
	c := openTemp(t)
	us := time.Microsecond
	// Stream times as JetStream might stamp them: ties, sub-microsecond
	// steps, and a clock stepped back by a second.
	stamps := []time.Time{
		t0, t0, t0.Add(300 * time.Nanosecond), t0.Add(5 * us),
		t0.Add(-time.Second), t0.Add(-time.Second), t0.Add(10 * us), t0.Add(time.Minute),
	}
	want := []time.Time{
		t0, t0.Add(us), t0.Add(2 * us), t0.Add(5 * us),
		t0.Add(6 * us), t0.Add(7 * us), t0.Add(10 * us), t0.Add(time.Minute),
	}
	var batch []Applied
	for i, at := range stamps {
		// Alternate two URIs so the same URI changes at tied stamps, and
		// interleave a second collection whose times are its own.
		uri := fmt.Sprintf("http://s1/%d", i%2)
		batch = append(batch, Applied{Seq: uint64(2*i + 1), At: at, Event: event("s1", "c", uri, cr, fmt.Sprint(i))})
		batch = append(batch, Applied{Seq: uint64(2*i + 2), At: t0.Add(-time.Hour), Event: event("s1", "d", uri, cr, fmt.Sprint(i))})
	}
	// Half one by one, half in a batch: the adjustment is the same.
	for _, b := range batch[:6] {
		if err := c.Apply(ctx, b.Seq, b.At, b.Event); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.ApplyBatch(ctx, batch[6:]); err != nil {
		t.Fatal(err)
	}
	chs := changes(t, c, "c")
	if len(chs) != len(want) {
		t.Fatalf("%d changes, want %d", len(chs), len(want))
	}
	seen := map[string]bool{}
	for i, ch := range chs {
		if !ch.At.Equal(want[i]) {
			t.Errorf("change %d (seq %d) at %s, want %s", i, ch.Seq, ch.At.Format(time.RFC3339Nano), want[i].Format(time.RFC3339Nano))
		}
		if !ch.Received.Equal(stamps[i].Truncate(us)) {
			t.Errorf("change %d received %s, want the stream time %s", i, ch.Received, stamps[i])
		}
		key := ch.URI + " " + ch.At.String()
		if seen[key] {
			t.Errorf("(uri, datetime) %s twice", key)
		}
		seen[key] = true
	}
	d := changes(t, c, "d")
	for i := 1; i < len(d); i++ {
		if !d[i].At.After(d[i-1].At) {
			t.Fatalf("collection d: change %d at %s not after %s", i, d[i].At, d[i-1].At)
		}
	}
	if !d[0].At.Equal(t0.Add(-time.Hour)) {
		t.Fatalf("collection d starts at %s: another collection's times leaked into it", d[0].At)
	}
	// The resource's Changed is its last change's adjusted time.
	r, err := c.Resource(ctx, "c", "http://s1/1")
	if err != nil {
		t.Fatal(err)
	}
	if !r.Changed.Equal(want[7]) {
		t.Fatalf("resource changed %s, want %s", r.Changed, want[7])
	}
	first, last, err := c.ChangeSpan(ctx, "c")
	if err != nil || !first.Equal(want[0]) || !last.Equal(want[7]) {
		t.Fatalf("ChangeSpan = %s, %s, %v; want %s, %s", first, last, err, want[0], want[7])
	}
	if f, l, err := c.ChangeSpan(ctx, "none"); err != nil || !f.IsZero() || !l.IsZero() {
		t.Fatalf("ChangeSpan of an unknown collection = %s, %s, %v", f, l, err)
	}

	// Consecutive intervals (from, until] partition the log.
	var got []uint64
	bounds := []time.Time{{}, want[1], want[5], want[5], {}}
	for i := 0; i+1 < len(bounds); i++ {
		err := c.ChangesBetween(ctx, "c", bounds[i], bounds[i+1], func(ch *ChangeRecord) error {
			got = append(got, ch.Seq)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if fmt.Sprint(got) != "[1 3 5 7 9 11 13 15]" {
		t.Fatalf("changes over consecutive intervals: %v", got)
	}
	colls, err := c.Collections(ctx)
	if err != nil || fmt.Sprint(colls) != "[c d]" {
		t.Fatalf("Collections = %v, %v", colls, err)
	}
}
