package gc

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
)

// appliedAt is a catalog at a fixed EVENTS sequence.
type appliedAt uint64

func (a *appliedAt) LastApplied(context.Context) (uint64, error) { return uint64(*a), nil }

// served is a node's dumps serving the given blobs.
type served []string

func (s served) BlobRefs(ctx context.Context, fn func(string) error) error {
	for _, k := range s {
		if err := fn(k); err != nil {
			return err
		}
	}
	return nil
}

// TestGCPositions: two nodes on one NATS server report how far their
// catalogs have applied EVENTS and the dump packages they serve, and
// either reads the least position and every package,
// whatever else the leases bucket holds (the gc lease itself).
func TestGCPositions(t *testing.T) {
	ctx := context.Background()
	q1 := queuetest.Start(t)
	q2 := queuetest.Start(t, func(c *queue.Config) { c.URL, c.Dir = q1.ClientURL(), "" })
	a1, a2 := appliedAt(40), appliedAt(25)
	pkg := strings.Repeat("ab", 32)
	p1, p2 := NewPositions(q1, &a1, nil, nil), NewPositions(q2, &a2, served{pkg}, nil)
	if _, ok, err := p1.MinApplied(ctx); ok || err != nil {
		t.Fatalf("MinApplied before any report = %v, %v; want none", ok, err)
	}
	l, err := q1.Lease(ctx, Lease)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	for _, p := range []*Positions{p1, p2} {
		if err := p.report(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if seq, ok, err := p1.MinApplied(ctx); seq != 25 || !ok || err != nil {
		t.Errorf("MinApplied = %d, %v, %v; want 25, the lagging node's", seq, ok, err)
	}
	var refs []string
	if err := p1.BlobRefs(ctx, func(k string) error { refs = append(refs, k); return nil }); err != nil || !slices.Equal(refs, []string{pkg}) {
		t.Errorf("BlobRefs on the first node = %v, %v; want the second node's package %s", refs, err, pkg)
	}
	a2 = 60
	if err := p2.report(ctx); err != nil {
		t.Fatal(err)
	}
	if seq, _, err := p2.MinApplied(ctx); seq != 40 || err != nil {
		t.Errorf("MinApplied after the second node caught up = %d, %v; want 40", seq, err)
	}
}
