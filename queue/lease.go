package queue

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ErrLeaseHeld is returned by Lease when another node holds the lease.
var ErrLeaseHeld = errors.New("lease held by another node")

// ErrLeaseLost is returned by Lease.Renew once the lease has passed to
// another node or expired: its holder must stop the work it guards.
var ErrLeaseLost = errors.New("lease lost")

// Lease is one node's hold on a name in BucketLeases (a Source, "gc"):
// while it holds, no other node's Lease of the name succeeds. It renews
// itself every third of the bucket's TTL; a holder that stops renewing
// (it died, or lost NATS) loses the lease once the TTL passes, and another
// node may take it. Revision is the fencing token: state guarded by the
// lease is written with a compare-and-set that a later holder's writes
// invalidate, so a holder that lost its lease cannot move it.
type Lease struct {
	kv     jetstream.KeyValue
	name   string
	key    string
	holder string
	ttl    time.Duration

	mu   sync.Mutex
	rev  uint64
	good time.Time // when the last successful write was sent

	lost     chan struct{}
	lostOnce sync.Once
	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

// Lease takes the lease called name for this node, and keeps renewing it
// until Release. It fails with ErrLeaseHeld when another node holds it.
// Like a publish, taking it waits at most Config.PublishTimeout: a request
// sent while the bucket elects a leader goes unanswered, and the caller
// asks again rather than wait out a harvest pass's context.
func (q *Queue) Lease(ctx context.Context, name string) (*Lease, error) {
	ctx, cancel := context.WithTimeout(ctx, q.publishTimeout())
	defer cancel()
	kv, err := q.Bucket(ctx, BucketLeases)
	if err != nil {
		return nil, err
	}
	l := &Lease{kv: kv, name: name, key: KVKey(name), holder: q.cfg.NodeName, ttl: q.cfg.LeaseTTL,
		lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	sent := time.Now()
	rev, err := kv.Create(ctx, l.key, []byte(l.holder))
	if errors.Is(err, jetstream.ErrKeyExists) {
		who := "another node"
		if e, gerr := kv.Get(ctx, l.key); gerr == nil {
			who = string(e.Value())
		}
		return nil, fmt.Errorf("queue: lease %q is held by %s: %w", name, who, ErrLeaseHeld)
	}
	if err != nil {
		return nil, fmt.Errorf("queue: take lease %q: %w", name, err)
	}
	l.rev, l.good = rev, sent
	go l.renewLoop()
	return l, nil
}

// Name is the name the lease was taken for.
func (l *Lease) Name() string { return l.name }

// Holder is this node's name, as other nodes see it in the bucket.
func (l *Lease) Holder() string { return l.holder }

// Revision is the lease's current revision in the bucket.
func (l *Lease) Revision() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rev
}

// Lost is closed once the lease is lost: the holder must stop.
func (l *Lease) Lost() <-chan struct{} { return l.lost }

// Held reports whether the lease is still this node's: not lost, and
// renewed within the TTL (a node cut off from NATS stops believing it
// holds the lease before the bucket lets another node take it).
func (l *Lease) Held() bool {
	select {
	case <-l.lost:
		return false
	default:
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return time.Since(l.good) < l.ttl
}

// validFor is how long the lease stays held without another renewal.
func (l *Lease) validFor() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ttl - time.Since(l.good)
}

// Context returns a context that ends when parent does or the lease is
// lost, for the work the lease guards.
func (l *Lease) Context(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	go func() {
		select {
		case <-l.lost:
			cancel(fmt.Errorf("lease %q: %w", l.name, ErrLeaseLost))
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(context.Canceled) }
}

// Renew writes the lease again, restarting its TTL. It fails with
// ErrLeaseLost when another node took it or it expired.
func (l *Lease) Renew(ctx context.Context) error {
	select {
	case <-l.lost:
		return fmt.Errorf("queue: renew lease %q: %w", l.name, ErrLeaseLost)
	default:
	}
	l.mu.Lock()
	rev := l.rev
	l.mu.Unlock()
	sent := time.Now()
	nrev, err := l.kv.Update(ctx, l.key, []byte(l.holder), rev)
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) {
		// A renewal that timed out may have been written all the same:
		// the key then still names this node, at a later revision.
		if later, ok := l.ownLaterRevision(ctx, rev); ok {
			nrev, err = l.kv.Update(ctx, l.key, []byte(l.holder), later)
		}
	}
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyNotFound) {
		l.markLost()
		return fmt.Errorf("queue: renew lease %q: %w", l.name, ErrLeaseLost)
	}
	if err != nil {
		if !l.Held() {
			l.markLost()
			return fmt.Errorf("queue: renew lease %q, not renewed within %s: %w: %w", l.name, l.ttl, ErrLeaseLost, err)
		}
		return fmt.Errorf("queue: renew lease %q: %w", l.name, err)
	}
	l.mu.Lock()
	l.rev, l.good = nrev, sent
	l.mu.Unlock()
	return nil
}

// ownLaterRevision reads the lease's key: when it still names this node
// at a revision after rev, and the lease has not outlived its TTL, the
// write at that revision was one of this node's renewals, sent but not
// answered in time, and the lease is still this node's.
func (l *Lease) ownLaterRevision(ctx context.Context, rev uint64) (uint64, bool) {
	if !l.Held() {
		return 0, false
	}
	e, err := l.kv.Get(ctx, l.key)
	if err != nil || string(e.Value()) != l.holder || e.Revision() <= rev {
		return 0, false
	}
	return e.Revision(), true
}

// Release stops renewing and gives the lease up at once, so that another
// node need not wait for the TTL. A lease already lost is left alone.
func (l *Lease) Release(ctx context.Context) error {
	l.stopOnce.Do(func() { close(l.stop) })
	<-l.done
	if !l.Held() {
		return nil
	}
	l.markLost()
	l.mu.Lock()
	rev := l.rev
	l.mu.Unlock()
	err := l.kv.Delete(ctx, l.key, jetstream.LastRevision(rev))
	if err != nil && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) && !errors.Is(err, jetstream.ErrKeyExists) {
		return fmt.Errorf("queue: release lease %q: %w", l.name, err)
	}
	return nil
}

func (l *Lease) markLost() { l.lostOnce.Do(func() { close(l.lost) }) }

// renewLoop renews every third of the TTL until Release or the loss.
func (l *Lease) renewLoop() {
	defer close(l.done)
	t := time.NewTicker(l.ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-l.lost:
			return
		case <-t.C:
		}
		// A renewal may take until the lease would lapse: under load a
		// write slower than a tick still keeps the lease, where giving up
		// on it would leave it to land unseen.
		ctx, cancel := context.WithTimeout(context.Background(), max(l.ttl/3, l.validFor()))
		_ = l.Renew(ctx) // a failure is retried on the next tick until Held says no
		cancel()
	}
}

// Holders returns who holds each lease whose name starts with prefix, by
// name: how a node learns how many nodes are alive ("node:") and how
// Sources are spread.
func (q *Queue) Holders(ctx context.Context, prefix string) (map[string]string, error) {
	kv, err := q.Bucket(ctx, BucketLeases)
	if err != nil {
		return nil, err
	}
	keys, err := kv.ListKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("queue: list leases: %w", err)
	}
	out := map[string]string{}
	for key := range keys.Keys() {
		name, err := KVName(key)
		if err != nil || !strings.HasPrefix(name, prefix) {
			continue
		}
		e, err := kv.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue // released or expired since listed
		}
		if err != nil {
			return nil, fmt.Errorf("queue: read lease %q: %w", name, err)
		}
		out[name] = string(e.Value())
	}
	return out, nil
}
