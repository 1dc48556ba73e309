package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
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
	pos := &positions{q: n.q, cat: n.cat, log: n.log.With("role", "gc")}
	if dumps := repub.Dumps(); dumps != nil {
		pos.pkgs = dumps
	}
	// Every node reports how far its catalog has applied EVENTS, even
	// one that never collects, for the node that does.
	n.spawn("gc-position", func() error { return pos.run(ctx) })
	if n.cfg.GC.Every == 0 {
		return nil
	}
	d := gc.Deps{Catalog: n.cat, Blobs: n.blobs, Turn: leaseTurn{q: n.q, name: gcLease}, Peers: pos, Align: repub.ChangeListPeriod(),
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

// leaseTurn is a Turn (gc's, fixity's) on the queue's leases: the work
// runs while this node holds the lease called name, and stops if it
// loses it.
type leaseTurn struct {
	q    *queue.Queue
	name string
}

var _ gc.Turn = leaseTurn{}

func (t leaseTurn) Take(ctx context.Context) (context.Context, func(), bool, error) {
	l, err := t.q.Lease(ctx, t.name)
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
// leases bucket, what gc on another node must know of it: the last EVENTS
// sequence its catalog applied and the blobs of the dump packages it
// serves. The bucket's TTL drops the report of a node that stopped
// renewing it.
const positionPrefix = "gc-applied."

// position is one node's report.
type position struct {
	Applied  uint64   `json:"applied"`
	Packages []string `json:"packages,omitempty"`
}

// positions reports this node's position and reads every node's: gc's
// Peers.
type positions struct {
	q   *queue.Queue
	cat interface {
		LastApplied(ctx context.Context) (uint64, error)
	}
	// pkgs are the node's dumps, if it builds them.
	pkgs interface {
		BlobRefs(ctx context.Context, fn func(key string) error) error
	}
	log *slog.Logger
}

var _ gc.Peers = (*positions)(nil)

// run reports the position every third of the lease TTL until ctx ends;
// a failed report is logged and tried again at the next tick (past the
// TTL, the collecting node no longer counts this one, nor keeps its
// packages).
func (p *positions) run(ctx context.Context) error {
	t := time.NewTicker(p.q.LeaseTTL() / 3)
	defer t.Stop()
	for {
		if err := p.report(ctx); err != nil && ctx.Err() == nil {
			p.log.WarnContext(ctx, "gc: reporting this node's position failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (p *positions) report(ctx context.Context) error {
	var pos position
	var err error
	if pos.Applied, err = p.cat.LastApplied(ctx); err != nil {
		return err
	}
	if p.pkgs != nil {
		err := p.pkgs.BlobRefs(ctx, func(k string) error { pos.Packages = append(pos.Packages, k); return nil })
		if err != nil {
			return err
		}
	}
	b, err := json.Marshal(&pos)
	if err != nil {
		return err
	}
	kv, err := p.q.Bucket(ctx, queue.BucketLeases)
	if err != nil {
		return err
	}
	_, err = kv.Put(ctx, positionPrefix+queue.KVKey(p.q.NodeName()), b)
	return err
}

// each calls fn with every node's report.
func (p *positions) each(ctx context.Context, fn func(*position)) error {
	kv, err := p.q.Bucket(ctx, queue.BucketLeases)
	if err != nil {
		return err
	}
	keys, err := kv.ListKeys(ctx)
	if err != nil {
		return fmt.Errorf("list positions: %w", err)
	}
	for k := range keys.Keys() {
		if !strings.HasPrefix(k, positionPrefix) {
			continue
		}
		e, err := kv.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue // expired meanwhile
		}
		if err != nil {
			return fmt.Errorf("read position %s: %w", k, err)
		}
		var pos position
		if err := json.Unmarshal(e.Value(), &pos); err != nil {
			return fmt.Errorf("position %s: %w", k, err)
		}
		fn(&pos)
	}
	return nil
}

// MinApplied is the least sequence any node reported.
func (p *positions) MinApplied(ctx context.Context) (uint64, bool, error) {
	var least uint64
	found := false
	err := p.each(ctx, func(pos *position) {
		if !found || pos.Applied < least {
			least, found = pos.Applied, true
		}
	})
	return least, found, err
}

// BlobRefs names every package blob any node reported.
func (p *positions) BlobRefs(ctx context.Context, fn func(key string) error) error {
	var keys []string
	if err := p.each(ctx, func(pos *position) { keys = append(keys, pos.Packages...) }); err != nil {
		return err
	}
	for _, k := range keys {
		if err := fn(k); err != nil {
			return err
		}
	}
	return nil
}
