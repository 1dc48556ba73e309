package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/nats-io/nats.go/jetstream"
)

// ErrFenced is returned by Position.Set once another node has claimed the
// position: this node lost the Source's lease and must not move it.
var ErrFenced = errors.New("position claimed by another node")

// position is how a Source's position is stored: its cursors by name, and
// who claimed it last, for an operator reading the bucket.
type position struct {
	Holder  string            `json:"holder"`
	Cursors map[string]string `json:"cursors"`
}

// Position is a Source's harvest position (its cursors: change time,
// validators, last baseline, notification subscription) in
// BucketPositions, claimed by the node that holds the Source's lease. It
// is one value, so that a claim fences all of it at once: every Set is a
// compare-and-set on the revision this node last wrote, and Claim writes
// the value again, so a node that claimed it earlier can no longer write.
type Position struct {
	kv     jetstream.KeyValue
	source string
	key    string
	holder string

	mu      sync.Mutex
	rev     uint64
	cursors map[string]string
	fenced  bool
	fresh   bool // no node had written a position of the Source before
}

// ClaimPosition reads the position of source and writes it back under this
// node's name, fencing out any node that claimed it before. Call it once
// the Source's lease is held. A Source never harvested gets an empty
// position. The claim waits at most Config.PublishTimeout, as Lease does.
func (q *Queue) ClaimPosition(ctx context.Context, source string) (*Position, error) {
	ctx, cancel := context.WithTimeout(ctx, q.publishTimeout())
	defer cancel()
	kv, err := q.Bucket(ctx, BucketPositions)
	if err != nil {
		return nil, err
	}
	p := &Position{kv: kv, source: source, key: KVKey(source), holder: q.cfg.NodeName}
	for {
		p.fenced, p.fresh = false, false
		var rev uint64
		pos := position{Cursors: map[string]string{}}
		e, err := kv.Get(ctx, p.key)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
			p.fresh = true
		case err != nil:
			return nil, fmt.Errorf("queue: read position of source %s: %w", source, err)
		default:
			rev = e.Revision()
			if err := json.Unmarshal(e.Value(), &pos); err != nil {
				return nil, fmt.Errorf("queue: position of source %s: %w", source, err)
			}
			if pos.Cursors == nil {
				pos.Cursors = map[string]string{}
			}
		}
		p.cursors, p.rev = pos.Cursors, rev
		err = p.write(ctx)
		if errors.Is(err, ErrFenced) {
			continue // another node wrote between the read and the claim: read again
		}
		if err != nil {
			return nil, err
		}
		return p, nil
	}
}

// ReadPosition returns the cursors of source as last written, for a node
// that does not hold its lease (a status page, a catch-up's log line).
func (q *Queue) ReadPosition(ctx context.Context, source string) (map[string]string, error) {
	kv, err := q.Bucket(ctx, BucketPositions)
	if err != nil {
		return nil, err
	}
	e, err := kv.Get(ctx, KVKey(source))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("queue: read position of source %s: %w", source, err)
	}
	var pos position
	if err := json.Unmarshal(e.Value(), &pos); err != nil {
		return nil, fmt.Errorf("queue: position of source %s: %w", source, err)
	}
	if pos.Cursors == nil {
		pos.Cursors = map[string]string{}
	}
	return pos.Cursors, nil
}

// Fresh reports whether the claim found no position at all: the Source
// was never harvested through the bucket, and cursors kept elsewhere (a
// catalog of an earlier version) may be carried over.
func (p *Position) Fresh() bool { return p.fresh }

// Source is the Source the position is of.
func (p *Position) Source() string { return p.source }

// Cursor returns one cursor, "" when it was never set.
func (p *Position) Cursor(name string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cursors[name]
}

// Cursors returns a copy of every cursor.
func (p *Position) Cursors() map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.cursors)
}

// Set stores one cursor (the empty value removes it). It fails with
// ErrFenced, and keeps failing, once another node has claimed the
// position.
func (p *Position) Set(ctx context.Context, name, value string) error {
	return p.SetMany(ctx, map[string]string{name: value})
}

// SetMany stores several cursors in one write.
func (p *Position) SetMany(ctx context.Context, vals map[string]string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fenced {
		return fmt.Errorf("queue: set position of source %s: %w", p.source, ErrFenced)
	}
	old := maps.Clone(p.cursors)
	for k, v := range vals {
		if v == "" {
			delete(p.cursors, k)
		} else {
			p.cursors[k] = v
		}
	}
	if err := p.writeLocked(ctx); err != nil {
		p.cursors = old
		return err
	}
	return nil
}

func (p *Position) write(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.writeLocked(ctx)
}

// writeLocked writes the cursors with a compare-and-set on p.rev (0: the
// key must not exist yet).
func (p *Position) writeLocked(ctx context.Context) error {
	b, err := json.Marshal(position{Holder: p.holder, Cursors: p.cursors})
	if err != nil {
		return fmt.Errorf("queue: encode position of source %s: %w", p.source, err)
	}
	var rev uint64
	if p.rev == 0 {
		rev, err = p.kv.Create(ctx, p.key, b)
	} else {
		rev, err = p.kv.Update(ctx, p.key, b, p.rev)
	}
	if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		p.fenced = true
		return fmt.Errorf("queue: set position of source %s: %w", p.source, ErrFenced)
	}
	if err != nil {
		return fmt.Errorf("queue: set position of source %s (%d bytes): %w", p.source, len(b), err)
	}
	p.rev = rev
	return nil
}
