package node

import (
	"context"
	"fmt"

	"github.com/viaduct-mirror/viaduct/fixity"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/storage/dir"
	"github.com/viaduct-mirror/viaduct/storage/s3"
)

var (
	_ fixity.Quarantiner = (*dir.Store)(nil)
	_ fixity.Quarantiner = (*s3.Store)(nil)
	_ fixity.Turn        = queue.Turn{}
)

// fixityLease names the lease that gives one node the turn to audit a
// blob store (package fixity): one per store, so that nodes sharing a
// bucket or a shared directory audit it once, and a node with a
// directory of its own audits its own.
func (n *Node) fixityLease() string {
	switch {
	case n.cfg.Blobs.Kind == "s3":
		c := n.cfg.Blobs.S3
		return "fixity:s3:" + c.Endpoint + "/" + c.Bucket + "/" + c.Prefix
	case n.cfg.Blobs.Shared:
		return "fixity:shared-dir"
	}
	return "fixity:dir:" + n.q.NodeName()
}

// startFixity starts the fixity audit of the node's blob store. It runs
// on every node, auditing while it holds the store's lease; off
// (fixity.bytes_per_second 0) it only exports its metrics.
func startFixity(ctx context.Context, n *Node) error {
	q, ok := n.blobs.(fixity.Quarantiner)
	if !ok {
		return fmt.Errorf("starting the fixity audit: the %s blob store cannot quarantine a bad copy", n.cfg.Blobs.Kind)
	}
	sources := make([]string, 0, len(n.cfg.Sources))
	for _, s := range n.cfg.Sources {
		sources = append(sources, s.Name)
	}
	a, err := fixity.New(n.cfg.Fixity, fixity.Deps{
		Catalog: n.cat, Blobs: n.blobs, Quarantine: q, Changes: n.q, Sources: sources,
		Turn: n.q.Turn(n.fixityLease()), TurnRetry: n.q.LeaseTTL(),
		Logger: n.log.With("role", "fixity"), Registerer: n.reg,
	})
	if err != nil {
		return fmt.Errorf("starting the fixity audit: %w", err)
	}
	n.fixity = a
	n.spawn("fixity", func() error { return a.Run(ctx) })
	return nil
}

// Fixity reports the fixity audit's state, for the status page: its last
// complete pass, the bad copies found and the repairs not yet back.
func (n *Node) Fixity() fixity.Status {
	if n.fixity == nil {
		return fixity.Status{}
	}
	return n.fixity.Status()
}
