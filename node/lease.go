package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/harvester"
	"github.com/viaduct-mirror/viaduct/queue"
)

// Lease names in queue.BucketLeases: one per live node, one per Source.
const (
	leaseNode   = "node:"
	leaseSource = "source:"
)

// sourceLeases decides which node harvests each Source, and keeps the
// harvest positions of the Sources this node holds. A node takes a
// Source's lease at the Source's first scheduled pass that finds it free,
// unless it already holds its share (the Sources divided by the live
// nodes, rounded up), and keeps it between passes; a node holding more
// than its share (a node joined) gives one up after its pass. The
// position is claimed with the lease, so a node that lost the lease can
// no longer move the Source's cursors.
type sourceLeases struct {
	q       *queue.Queue
	cat     *catalog.Catalog // cursors kept before positions were shared
	sources int
	log     *slog.Logger
	self    *queue.Lease // this node's own lease: it is alive

	mu    sync.Mutex
	held  map[string]*heldSource
	nodes int       // live nodes, as last counted
	asked time.Time // when nodes was counted
}

// heldSource is a Source this node harvests.
type heldSource struct {
	lease *queue.Lease
	pos   *queue.Position
}

var (
	_ harvester.Leases  = (*sourceLeases)(nil)
	_ harvester.Cursors = (*sourceLeases)(nil)
)

func startLeases(ctx context.Context, q *queue.Queue, cat *catalog.Catalog, sources int, log *slog.Logger) (*sourceLeases, error) {
	l := &sourceLeases{q: q, cat: cat, sources: sources, log: log, held: map[string]*heldSource{}}
	held, err := l.announce(ctx)
	if err != nil {
		return nil, err
	}
	if held {
		// A restart within the lease TTL, the usual case after a crash or
		// a quick restart: nothing is wrong, so nothing above INFO.
		log.Info("this node's name is still leased by its previous run; it is announced again once that lease runs out", "node", q.NodeName(), "within", q.LeaseTTL())
	}
	return l, nil
}

// announce takes this node's own lease, by which other nodes count it as
// alive. held reports that the name's lease is still in the bucket, the
// previous run's of this node when it restarted within the lease TTL; the
// lease is then taken at a later count of the live nodes.
func (l *sourceLeases) announce(ctx context.Context) (held bool, err error) {
	self, err := l.q.Lease(ctx, leaseNode+l.q.NodeName())
	switch {
	case err == nil:
		l.mu.Lock()
		l.self = self
		l.mu.Unlock()
		return false, nil
	case errors.Is(err, queue.ErrLeaseHeld):
		return true, nil
	}
	return false, fmt.Errorf("announcing node %s: %w", l.q.NodeName(), err)
}

// Hold implements harvester.Leases.
func (l *sourceLeases) Hold(ctx context.Context, source string) (context.Context, func(), error) {
	hs, err := l.take(ctx, source)
	if err != nil {
		return ctx, nil, err
	}
	pctx, cancel := hs.lease.Context(ctx)
	return pctx, func() { cancel(); l.rebalance(source) }, nil
}

// take returns the Source's lease and position, taking them when free and
// within this node's share.
func (l *sourceLeases) take(ctx context.Context, source string) (*heldSource, error) {
	l.mu.Lock()
	hs := l.held[source]
	if hs != nil && !hs.lease.Held() {
		delete(l.held, source)
		l.log.Warn("lease on source lost; another node may harvest it now", "source", source)
		hs = nil
	}
	l.mu.Unlock()
	if hs != nil {
		return hs, nil
	}
	if l.full(ctx) {
		return nil, harvester.ErrElsewhere
	}
	lease, err := l.q.Lease(ctx, leaseSource+source)
	if errors.Is(err, queue.ErrLeaseHeld) {
		return nil, harvester.ErrElsewhere
	}
	if err != nil {
		return nil, err
	}
	pos, err := l.q.ClaimPosition(ctx, source)
	if err == nil && pos.Fresh() {
		err = l.migrate(ctx, pos)
	}
	if err != nil {
		lease.Release(context.WithoutCancel(ctx))
		return nil, err
	}
	hs = &heldSource{lease: lease, pos: pos}
	l.mu.Lock()
	l.held[source] = hs
	l.mu.Unlock()
	l.log.Info("harvesting source here", "source", source, "node", l.q.NodeName())
	return hs, nil
}

// share is how many Sources a node should hold with nodes alive.
func (l *sourceLeases) share(nodes int) int {
	nodes = max(nodes, 1)
	return (l.sources + nodes - 1) / nodes
}

// full reports whether this node holds its share already.
func (l *sourceLeases) full(ctx context.Context) bool {
	nodes := l.liveNodes(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.held) >= l.share(nodes)
}

// liveNodes counts the nodes holding a node lease, at most once every
// third of the lease TTL; on an error the last count stands.
func (l *sourceLeases) liveNodes(ctx context.Context) int {
	l.mu.Lock()
	if l.nodes > 0 && time.Since(l.asked) < l.q.LeaseTTL()/3 {
		defer l.mu.Unlock()
		return l.nodes
	}
	announced := l.self != nil
	l.mu.Unlock()
	if !announced {
		if held, err := l.announce(ctx); err == nil && !held {
			l.log.Info("this node is announced again", "node", l.q.NodeName())
		}
	}
	nodes, err := l.q.Holders(ctx, leaseNode)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.log.Warn("counting live nodes", "err", err)
		return max(l.nodes, 1)
	}
	l.nodes, l.asked = max(len(nodes), 1), time.Now()
	return l.nodes
}

// rebalance gives up source after its pass when this node holds more than
// its share, so that a node that joined finds Sources free.
func (l *sourceLeases) rebalance(source string) {
	ctx, cancel := context.WithTimeout(context.Background(), l.q.LeaseTTL())
	defer cancel()
	nodes := l.liveNodes(ctx)
	l.mu.Lock()
	hs := l.held[source]
	if hs == nil || len(l.held) <= l.share(nodes) {
		l.mu.Unlock()
		return
	}
	delete(l.held, source)
	l.mu.Unlock()
	if err := hs.lease.Release(ctx); err != nil {
		l.log.Warn("giving a source up", "source", source, "err", err)
	}
	l.log.Info("source given up to even the load", "source", source, "nodes", nodes)
}

// close gives every lease up, so that other nodes take the Sources at
// their next pass instead of after the TTL.
func (l *sourceLeases) close() error {
	if l == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	l.mu.Lock()
	held := l.held
	l.held = map[string]*heldSource{}
	l.mu.Unlock()
	var errs []error
	for _, hs := range held {
		errs = append(errs, hs.lease.Release(ctx))
	}
	l.mu.Lock()
	self := l.self
	l.mu.Unlock()
	if self != nil {
		errs = append(errs, self.Release(ctx))
	}
	return errors.Join(errs...)
}
