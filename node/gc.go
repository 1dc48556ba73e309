package node

import (
	"context"
	"fmt"

	"github.com/viaduct-mirror/viaduct/gc"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/republish"
)

var (
	_ gc.Packages = (*republish.Dumps)(nil)
	_ gc.Turn     = queue.Turn{}
)

// startGC starts garbage collection (package gc) with the node's catalog,
// blob store and, when it builds them, dumps. Every node runs it; the one
// holding the gc lease collects, the others skip their turn.
func startGC(ctx context.Context, n *Node, repub *republish.Server) error {
	var pkgs gc.Packages
	if dumps := repub.Dumps(); dumps != nil {
		pkgs = dumps
	}
	log := n.log.With("role", "gc")
	pos := gc.NewPositions(n.q, n.cat, pkgs, log)
	// Every node reports how far its catalog has applied EVENTS, even
	// one that never collects, for the node that does.
	n.spawn("gc-position", func() error { return pos.Run(ctx) })
	if n.cfg.GC.Every == 0 {
		return nil
	}
	c, err := gc.New(n.cfg.GC, gc.Deps{Catalog: n.cat, Blobs: n.blobs, Packages: pkgs, Turn: n.q.Turn(gc.Lease), Peers: pos,
		Align: repub.ChangeListPeriod(), Logger: log, Registerer: n.reg})
	if err != nil {
		return fmt.Errorf("starting garbage collection: %w", err)
	}
	n.spawn("gc", func() error { return c.Run(ctx) })
	return nil
}
