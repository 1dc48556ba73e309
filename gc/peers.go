package gc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/viaduct-mirror/viaduct/queue"
)

// Lease is the name of the lease that gives one node at a time the turn
// to collect garbage in a blob store several nodes may share (Turn: the
// queue's Turn of this name).
const Lease = "gc"

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

// Applied is how far a node's catalog has applied EVENTS.
// *catalog.Catalog is one.
type Applied interface {
	LastApplied(ctx context.Context) (uint64, error)
}

// PackageRefs names the blobs of the dump packages a node serves.
type PackageRefs interface {
	BlobRefs(ctx context.Context, fn func(key string) error) error
}

// Positions reports this node's position and reads every node's, in the
// queue's leases bucket: the Peers of nodes that share one blob store.
// Every node runs it, even one that never collects, for the node that
// does.
type Positions struct {
	q   *queue.Queue
	cat Applied
	// pkgs are the node's dumps, if it builds them.
	pkgs PackageRefs
	log  *slog.Logger
}

var _ Peers = (*Positions)(nil)

// NewPositions reports cat's position and, when pkgs is not nil, the
// packages of pkgs, as this node of q.
func NewPositions(q *queue.Queue, cat Applied, pkgs PackageRefs, log *slog.Logger) *Positions {
	return &Positions{q: q, cat: cat, pkgs: pkgs, log: log}
}

// Run reports the position every third of the lease TTL until ctx ends;
// a failed report is logged and tried again at the next tick (past the
// TTL, the collecting node no longer counts this one, nor keeps its
// packages).
func (p *Positions) Run(ctx context.Context) error {
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

func (p *Positions) report(ctx context.Context) error {
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
func (p *Positions) each(ctx context.Context, fn func(*position)) error {
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
func (p *Positions) MinApplied(ctx context.Context) (uint64, bool, error) {
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
func (p *Positions) BlobRefs(ctx context.Context, fn func(key string) error) error {
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
