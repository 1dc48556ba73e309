package node

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

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
	pos := &positions{q: n.q, cat: n.cat}
	// Every node reports how far its catalog has applied EVENTS, even
	// one that never collects, for the node that does.
	n.spawn("gc-position", func() error { return pos.run(ctx) })
	if n.cfg.GC.Every == 0 {
		return nil
	}
	d := gc.Deps{Catalog: n.cat, Blobs: n.blobs, Turn: leaseTurn{q: n.q}, Peers: pos, Align: repub.ChangeListPeriod(),
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

// positionPrefix starts the keys under which each node reports, in the
// leases bucket, the last EVENTS sequence its catalog applied. The
// bucket's TTL drops the report of a node that stopped renewing it.
const positionPrefix = "gc-applied."

// positions reports this node's catalog position and reads every node's:
// gc's Peers.
type positions struct {
	q   *queue.Queue
	cat interface {
		LastApplied(ctx context.Context) (uint64, error)
	}
}

var _ gc.Peers = (*positions)(nil)

// run reports the position every third of the lease TTL until ctx ends;
// a failed report is tried again at the next tick.
func (p *positions) run(ctx context.Context) error {
	t := time.NewTicker(p.q.LeaseTTL() / 3)
	defer t.Stop()
	for {
		_ = p.report(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (p *positions) report(ctx context.Context) error {
	seq, err := p.cat.LastApplied(ctx)
	if err != nil {
		return err
	}
	kv, err := p.q.Bucket(ctx, queue.BucketLeases)
	if err != nil {
		return err
	}
	_, err = kv.Put(ctx, positionPrefix+queue.KVKey(p.q.NodeName()), []byte(strconv.FormatUint(seq, 10)))
	return err
}

// MinApplied reads every node's report.
func (p *positions) MinApplied(ctx context.Context) (uint64, bool, error) {
	kv, err := p.q.Bucket(ctx, queue.BucketLeases)
	if err != nil {
		return 0, false, err
	}
	keys, err := kv.ListKeys(ctx)
	if err != nil {
		return 0, false, fmt.Errorf("list positions: %w", err)
	}
	var least uint64
	found := false
	for k := range keys.Keys() {
		if !strings.HasPrefix(k, positionPrefix) {
			continue
		}
		e, err := kv.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue // expired meanwhile
		}
		if err != nil {
			return 0, false, fmt.Errorf("read position %s: %w", k, err)
		}
		seq, err := strconv.ParseUint(string(e.Value()), 10, 64)
		if err != nil {
			return 0, false, fmt.Errorf("position %s: %q: %w", k, e.Value(), err)
		}
		if !found || seq < least {
			least, found = seq, true
		}
	}
	return least, found, nil
}
