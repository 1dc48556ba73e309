package queue

import (
	"context"
	"errors"
	"time"
)

// Turn is work that one node at a time may do (garbage collection, a
// fixity audit): it runs while this node holds the lease called name, and
// stops if the node loses it. It is the Turn of packages gc and fixity.
type Turn struct {
	q    *Queue
	name string
}

// Turn is the turn guarded by the lease called name.
func (q *Queue) Turn(name string) Turn { return Turn{q: q, name: name} }

// Take takes the lease: run ends when the lease is lost or release is
// called; ok is false, with no error, when another node holds it.
func (t Turn) Take(ctx context.Context) (run context.Context, release func(), ok bool, err error) {
	l, err := t.q.Lease(ctx, t.name)
	if errors.Is(err, ErrLeaseHeld) {
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, err
	}
	run, cancel := l.Context(ctx)
	release = func() {
		cancel()
		rctx, done := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer done()
		_ = l.Release(rctx) // unreleased, it expires after the lease TTL
	}
	return run, release, true, nil
}
