package catalog

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// TestLookupAgreesWithResource checks Lookup against the full row read
// of Resource: for a missing row, a held copy, a baseline statement
// whose list's at is later than its time, a deleted copy and a
// tombstone.
func TestLookupAgreesWithResource(t *testing.T) {
	ctx := context.Background()
	c := openTemp(t)
	if _, found, err := c.Lookup(ctx, "c", "http://s1/none"); err != nil || found {
		t.Fatalf("Lookup of a missing row: found %v, %v; want not found, no error", found, err)
	}

	held := event("s1", "c", "http://s1/held", cr, "held copy")
	held.Upstream.Modified = held.Upstream.Time.Add(-time.Minute)
	listed := event("s1", "c", "http://s1/listed", cr, "listed copy")
	listed.Upstream.Listed = listed.Upstream.Time.Add(time.Hour)
	gone := event("s1", "c", "http://s1/gone", cr, "gone copy")
	goneDel := event("s1", "c", "http://s1/gone", del, "")
	tomb := event("s1", "c", "http://s1/tomb", del, "")
	for i, ev := range []*viaduct.Event{held, listed, gone, goneDel, tomb} {
		mustApply(t, c, uint64(i+1), ev)
	}

	for _, tc := range []struct {
		uri       string
		wantOrder time.Time
	}{
		{held.URI, held.Upstream.Time},
		{listed.URI, listed.Upstream.Listed},
		{gone.URI, goneDel.Upstream.Time},
		{tomb.URI, tomb.Upstream.Time},
	} {
		l, found, err := c.Lookup(ctx, "c", tc.uri)
		if err != nil || !found {
			t.Errorf("Lookup(%s): found %v, %v", tc.uri, found, err)
			continue
		}
		r, err := c.Resource(ctx, "c", tc.uri)
		if err != nil {
			t.Fatal(err)
		}
		want := Lookup{URI: r.URI, Deleted: r.Deleted, SHA256: r.SHA256, MD5: r.MD5, Length: r.Length, Type: r.Type,
			UpstreamTime: r.Upstream.Time, Order: tc.wantOrder}
		if !l.UpstreamTime.Equal(want.UpstreamTime) || !l.Order.Equal(want.Order) {
			t.Errorf("Lookup(%s) times: %s, order %s; want %s, order %s", tc.uri, l.UpstreamTime, l.Order, want.UpstreamTime, want.Order)
		}
		if !l.UpstreamModified.Equal(r.Upstream.Modified) {
			t.Errorf("Lookup(%s) modified %s, want %s", tc.uri, l.UpstreamModified, r.Upstream.Modified)
		}
		l.UpstreamTime, l.Order, l.UpstreamModified, want.UpstreamTime, want.Order = time.Time{}, time.Time{}, time.Time{}, time.Time{}, time.Time{}
		if l != want {
			t.Errorf("Lookup(%s) = %+v, want %+v", tc.uri, l, want)
		}
	}
	if l, _, _ := c.Lookup(ctx, "c", gone.URI); !l.Deleted || l.SHA256 != gone.SHA256 || l.Length != gone.Length {
		t.Errorf("Lookup of a deleted copy: %+v, want deleted with the last copy's sha-256 and length", l)
	}
	if l, _, _ := c.Lookup(ctx, "c", tomb.URI); !l.Deleted || l.SHA256 != "" {
		t.Errorf("Lookup of a tombstone: %+v, want deleted without a copy", l)
	}
	if _, found, err := c.Lookup(ctx, "other", held.URI); err != nil || found {
		t.Errorf("Lookup in another collection: found %v, %v; want not found", found, err)
	}
}

// BenchmarkLookup compares the lean read of a fetch worker with the full
// row read of Resource, for a row the catalog lacks (every change of a
// first baseline) and one it has, in a catalog of 20,000 rows; and the
// worker's lookup by md5 (HeldByHash) of a copy held and of one not.
func BenchmarkLookup(b *testing.B) {
	ctx := context.Background()
	c := openTemp(b)
	const n = 20000
	fill(b, c, "s1", "c", 1, n)
	for _, hit := range []bool{false, true} {
		uri := func(i int) string {
			if hit {
				return fmt.Sprintf("http://s1/r%07d", i%n)
			}
			return fmt.Sprintf("http://s1/x%07d", i)
		}
		name := map[bool]string{false: "miss", true: "hit"}[hit]
		b.Run("Lookup/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, found, err := c.Lookup(ctx, "c", uri(i)); err != nil || found != hit {
					b.Fatalf("Lookup: found %v, %v", found, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N), "us/lookup")
		})
		b.Run("HeldByHash/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				content := fmt.Sprint(i % n)
				if !hit {
					content = "not held " + content
				}
				hs := resourcesync.Hashes{{Alg: resourcesync.MD5, Value: md5hex(content)}}
				if _, err := c.HeldByHash(ctx, "s1", hs, nil); (err == nil) != hit {
					b.Fatalf("HeldByHash: %v", err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N), "us/lookup")
		})
		b.Run("Resource/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := c.Resource(ctx, "c", uri(i)); (err == nil) != hit {
					b.Fatalf("Resource: %v", err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N), "us/lookup")
		})
	}
}
