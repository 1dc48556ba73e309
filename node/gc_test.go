package node

import (
	"context"
	"testing"

	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
)

// appliedAt is a catalog at a fixed EVENTS sequence.
type appliedAt uint64

func (a *appliedAt) LastApplied(context.Context) (uint64, error) { return uint64(*a), nil }

// TestGCPositions: two nodes on one NATS server report how far their
// catalogs have applied EVENTS, and either reads the least of them,
// whatever else the leases bucket holds (the gc lease itself).
func TestGCPositions(t *testing.T) {
	ctx := context.Background()
	q1 := queuetest.Start(t)
	q2 := queuetest.Start(t, func(c *queue.Config) { c.URL, c.Dir = q1.ClientURL(), "" })
	a1, a2 := appliedAt(40), appliedAt(25)
	p1, p2 := &positions{q: q1, cat: &a1}, &positions{q: q2, cat: &a2}
	if _, ok, err := p1.MinApplied(ctx); ok || err != nil {
		t.Fatalf("MinApplied before any report = %v, %v; want none", ok, err)
	}
	l, err := q1.Lease(ctx, gcLease)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	for _, p := range []*positions{p1, p2} {
		if err := p.report(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if seq, ok, err := p1.MinApplied(ctx); seq != 25 || !ok || err != nil {
		t.Errorf("MinApplied = %d, %v, %v; want 25, the lagging node's", seq, ok, err)
	}
	a2 = 60
	if err := p2.report(ctx); err != nil {
		t.Fatal(err)
	}
	if seq, _, err := p2.MinApplied(ctx); seq != 40 || err != nil {
		t.Errorf("MinApplied after the second node caught up = %d, %v; want 40", seq, err)
	}
}
