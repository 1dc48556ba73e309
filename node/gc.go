package node

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/viaduct-mirror/viaduct/gc"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/republish"
)

var _ gc.Packages = (*republish.Dumps)(nil)

// gcLease is the name of the lease that gives one node at a time the
// turn to collect garbage in a blob store several nodes may share.
const gcLease = "gc"

// startGC starts garbage collection (package gc) with the node's catalog,
// blob store and, when it builds them, dumps. Every node runs it; the one
// holding the gc lease collects, the others skip their turn.
func startGC(ctx context.Context, n *Node, repub *republish.Server) error {
	if n.cfg.GC.Every == 0 {
		return nil
	}
	d := gc.Deps{Catalog: n.cat, Blobs: n.blobs, Turn: leaseTurn{q: n.q}, Align: repub.ChangeListPeriod(),
		Logger: n.log.With("role", "gc"), Registerer: n.reg}
	if dumps := repub.Dumps(); dumps != nil {
		d.Packages = dumps
	}
	c, err := gc.New(n.cfg.GC, d)
	if err != nil {
		return fmt.Errorf("starting garbage collection: %w", err)
	}
	n.spawn("gc", func() error { return c.Run(ctx) })
	return nil
}

// leaseTurn is gc's Turn on the queue's leases: a collection runs while
// this node holds the gc lease, and stops if it loses it.
type leaseTurn struct{ q *queue.Queue }

var _ gc.Turn = leaseTurn{}

func (t leaseTurn) Take(ctx context.Context) (context.Context, func(), bool, error) {
	l, err := t.q.Lease(ctx, gcLease)
	if errors.Is(err, queue.ErrLeaseHeld) {
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, err
	}
	run, cancel := l.Context(ctx)
	release := func() {
		cancel()
		rctx, done := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer done()
		_ = l.Release(rctx) // unreleased, it expires after the lease TTL
	}
	return run, release, true, nil
}
