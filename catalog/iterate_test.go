package catalog

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// filledURI is the URI fill gives resource k of source.
func filledURI(source string, k int) string { return fmt.Sprintf("http://%s/r%07d", source, k) }

// fill applies n creations in collection c, one per URI, in batches, and
// returns the next free seq.
func fill(t testing.TB, c *Catalog, source, coll string, seq uint64, n int) uint64 {
	t.Helper()
	ctx := context.Background()
	batch := make([]Applied, 0, 5000)
	for i := range n {
		// URIs are applied out of order so that uri order is not seq order.
		k := (i * 7919) % n
		batch = append(batch, Applied{Seq: seq, At: t0.Add(time.Duration(seq) * time.Microsecond),
			Event: event(source, coll, filledURI(source, k), cr, fmt.Sprint(k))})
		seq++
		if len(batch) == cap(batch) || i == n-1 {
			if err := c.ApplyBatch(ctx, batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	return seq
}

func TestResourcesStreamAllInOrderOnce(t *testing.T) {
	ctx := context.Background()
	c := openTemp(t)
	const n = 100000
	next := fill(t, c, "s1", "c", 1, n)
	// Another collection and another source, which must not leak in.
	next = fill(t, c, "s2", "other", next, 10)
	// Deleted resources are not listed.
	for _, k := range []int{0, 4999, n - 1} {
		mustApply(t, c, next, event("s1", "c", fmt.Sprintf("http://s1/r%07d", k), del, ""))
		next++
	}
	wantN := n - 3

	check := func(name string, walk func(fn func(*Resource) error) error) {
		t.Helper()
		var count int
		prev := ""
		err := walk(func(r *Resource) error {
			if r.URI <= prev {
				return fmt.Errorf("%s after %s: out of order or repeated", r.URI, prev)
			}
			if r.Collection != "c" || r.Deleted {
				return fmt.Errorf("%s: collection %s, deleted %v", r.URI, r.Collection, r.Deleted)
			}
			prev = r.URI
			count++
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if count != wantN {
			t.Fatalf("%s: %d resources, want %d", name, count, wantN)
		}
	}
	check("Resources", func(fn func(*Resource) error) error {
		return c.Resources(ctx, "c", "", 0, fn)
	})
	upTimes := map[string]time.Time{}
	check("SourceResources", func(fn func(*Resource) error) error {
		return c.SourceResources(ctx, "s1", "c", func(r *Resource) error {
			upTimes[r.URI] = r.Upstream.Time
			return fn(r)
		})
	})
	// The baseline's lean walk: the same resources, the same times.
	check("SourceHeld", func(fn func(*Resource) error) error {
		return c.SourceHeld(ctx, "s1", "c", func(e *HeldEntry) error {
			if want := upTimes[e.URI]; want.IsZero() || !e.UpstreamTime.Equal(want) {
				return fmt.Errorf("%s: upstream time %v, SourceResources says %v", e.URI, e.UpstreamTime, want)
			}
			return fn(&Resource{Collection: e.Collection, URI: e.URI})
		})
	})
	// The republisher's pages of 50,000 (a limit that is not a multiple of
	// the internal page), each starting after the last URI of the previous.
	check("Resources by pages", func(fn func(*Resource) error) error {
		after := ""
		for {
			got := 0
			err := c.Resources(ctx, "c", after, 33333, func(r *Resource) error {
				got++
				after = r.URI
				return fn(r)
			})
			if err != nil || got < 33333 {
				return err
			}
		}
	})
	if cnt, bytes, err := c.CountResources(ctx, "c"); err != nil || cnt != wantN || bytes <= 0 {
		t.Fatalf("CountResources = %d, %d, %v; want %d", cnt, bytes, err, wantN)
	}

	// An error from fn stops the walk and comes back.
	stop := errors.New("stop")
	calls := 0
	err := c.Resources(ctx, "c", "", 0, func(*Resource) error {
		calls++
		if calls == 1500 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || calls != 1500 {
		t.Fatalf("stopped walk: %v after %d calls", err, calls)
	}

	var seqs int
	prevSeq := uint64(0)
	err = c.Changes(ctx, "c", 2, 0, func(ch *ChangeRecord) error {
		if ch.Seq <= prevSeq {
			return fmt.Errorf("seq %d after %d", ch.Seq, prevSeq)
		}
		prevSeq = ch.Seq
		seqs++
		return nil
	})
	if err != nil || seqs != n-1+3 {
		t.Fatalf("Changes from seq 2: %d changes, %v; want %d", seqs, err, n-1+3)
	}
}

// TestSourceWalkInASharedCollection: Sources sharing a collection each walk
// their own resources in it, across the walk's pages, and not their
// resources in another collection.
func TestSourceWalkInASharedCollection(t *testing.T) {
	c := openTemp(t)
	ctx := context.Background()
	n := pageSize + pageSize/2
	next := fill(t, c, "s1", "c", 1, n)
	next = fill(t, c, "s2", "c", next, 10)
	fill(t, c, "s1", "other", next, 5)
	for _, w := range []struct {
		source string
		want   int
	}{{"s1", n}, {"s2", 10}} {
		got, prev := 0, ""
		err := c.SourceHeld(ctx, w.source, "c", func(e *HeldEntry) error {
			if e.Collection != "c" || e.URI <= prev || !strings.HasPrefix(e.URI, "http://"+w.source+"/") {
				return fmt.Errorf("%s in %s after %s", e.URI, e.Collection, prev)
			}
			prev = e.URI
			got++
			return nil
		})
		if err != nil || got != w.want {
			t.Errorf("SourceHeld(%s, c): %d resources, %v; want %d", w.source, got, err, w.want)
		}
	}
}
