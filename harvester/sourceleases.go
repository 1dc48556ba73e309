package harvester

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/queue"
)

// Lease names in queue.BucketLeases: one per live node, one per Source.
const (
	LeaseNode   = "node:"
	LeaseSource = "source:"
)

// SourceLeases decides which node harvests each Source, and keeps the
// harvest positions of the Sources this node holds. A node takes a
// Source's lease at the Source's first scheduled pass that finds it free,
// unless it already holds its share (the Sources divided by the live
// nodes, rounded up), and keeps it between passes; a node holding more
// than its share (a node joined) gives one up after its pass. The
// position is claimed with the lease, so a node that lost the lease can
// no longer move the Source's cursors.
type SourceLeases struct {
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
	_ Leases  = (*SourceLeases)(nil)
	_ Cursors = (*SourceLeases)(nil)
)

func StartLeases(ctx context.Context, q *queue.Queue, cat *catalog.Catalog, sources int, log *slog.Logger) (*SourceLeases, error) {
	l := &SourceLeases{q: q, cat: cat, sources: sources, log: log, held: map[string]*heldSource{}}
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
func (l *SourceLeases) announce(ctx context.Context) (held bool, err error) {
	self, err := l.q.Lease(ctx, LeaseNode+l.q.NodeName())
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

// Hold implements Leases.
func (l *SourceLeases) Hold(ctx context.Context, source string) (context.Context, func(), error) {
	hs, err := l.take(ctx, source)
	if err != nil {
		return ctx, nil, err
	}
	pctx, cancel := hs.lease.Context(ctx)
	return pctx, func() { cancel(); l.rebalance(source) }, nil
}

// take returns the Source's lease and position, taking them when free and
// within this node's share.
func (l *SourceLeases) take(ctx context.Context, source string) (*heldSource, error) {
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
		return nil, ErrElsewhere
	}
	lease, err := l.q.Lease(ctx, LeaseSource+source)
	if errors.Is(err, queue.ErrLeaseHeld) {
		return nil, ErrElsewhere
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
func (l *SourceLeases) share(nodes int) int {
	nodes = max(nodes, 1)
	return (l.sources + nodes - 1) / nodes
}

// full reports whether this node holds its share already.
func (l *SourceLeases) full(ctx context.Context) bool {
	nodes := l.liveNodes(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.held) >= l.share(nodes)
}

// liveNodes counts the nodes holding a node lease, at most once every
// third of the lease TTL; on an error the last count stands.
func (l *SourceLeases) liveNodes(ctx context.Context) int {
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
	nodes, err := l.q.Holders(ctx, LeaseNode)
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
func (l *SourceLeases) rebalance(source string) {
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
func (l *SourceLeases) Close() error {
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

// Reconfigure tells the leases how many Sources there are now, so each
// node's share follows, and gives up the leases of removed Sources.
func (l *SourceLeases) Reconfigure(ctx context.Context, sources int, removed []string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.sources = sources
	gone := map[string]*heldSource{}
	for _, name := range removed {
		if hs := l.held[name]; hs != nil {
			gone[name] = hs
			delete(l.held, name)
		}
	}
	l.mu.Unlock()
	for name, hs := range gone {
		if err := hs.lease.Release(ctx); err != nil {
			l.log.Warn("giving up the lease of a removed source", "source", name, "err", err)
		}
	}
}
