package queue_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
)

// peer opens a second node on the embedded server of q, as a node of a
// cluster would connect to it.
func peer(t *testing.T, q *queue.Queue, name string, opts ...func(*queue.Config)) *queue.Queue {
	t.Helper()
	cfg := queuetest.Config(t)
	cfg.URL, cfg.Dir, cfg.NodeName, cfg.LeaseTTL = q.ClientURL(), "", name, q.LeaseTTL()
	for _, o := range opts {
		o(&cfg)
	}
	p := open(t, cfg)
	t.Cleanup(func() { p.Close() })
	return p
}

func shortLease(c *queue.Config) { c.LeaseTTL = 2 * time.Second }

// A lease is one node's at a time; released, the next node takes it at
// once.
func TestLeaseOneHolderAtATime(t *testing.T) {
	ctx := ctxTimeout(t, 30*time.Second)
	srv := queuetest.Start(t, shortLease)
	a, b := peer(t, srv, "node-a"), peer(t, srv, "node-b")

	la, err := a.Lease(ctx, "example.org repo")
	if err != nil {
		t.Fatalf("a takes the lease: %v", err)
	}
	if _, err := b.Lease(ctx, "example.org repo"); !errors.Is(err, queue.ErrLeaseHeld) || !strings.Contains(err.Error(), "node-a") {
		t.Fatalf("b takes a held lease: got %v, want ErrLeaseHeld naming node-a", err)
	}
	// Renewals keep it a's well past the TTL.
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(2 * srv.LeaseTTL()); time.Now().Before(deadline); <-tick.C {
		if _, err := b.Lease(ctx, "example.org repo"); !errors.Is(err, queue.ErrLeaseHeld) {
			t.Fatalf("b took a renewed lease: %v", err)
		}
		if !la.Held() {
			t.Fatal("a no longer holds its renewed lease")
		}
	}
	if err := la.Release(ctx); err != nil {
		t.Fatalf("release: %v", err)
	}
	lb, err := b.Lease(ctx, "example.org repo")
	if err != nil {
		t.Fatalf("b takes a released lease: %v", err)
	}
	if la.Held() {
		t.Fatal("a still believes it holds a lease it released")
	}
	if err := lb.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// A node that dies without releasing loses its lease after the TTL, and
// another node takes it; a holder whose lease was taken from it finds out
// at its next renewal.
func TestLeaseExpiresWhenTheHolderDies(t *testing.T) {
	ctx := ctxTimeout(t, 30*time.Second)
	srv := queuetest.Start(t, shortLease)
	a, b := peer(t, srv, "node-a"), peer(t, srv, "node-b")

	if _, err := a.Lease(ctx, "gc"); err != nil {
		t.Fatal(err)
	}
	a.Conn().Close() // a dies: no release, no renewal
	var lb *queue.Lease
	eventually(t, 20*time.Second, "b to take the dead node's lease", func() bool {
		l, err := b.Lease(ctx, "gc")
		if err != nil && !errors.Is(err, queue.ErrLeaseHeld) {
			t.Fatalf("b takes the lease: %v", err)
		}
		lb = l
		return err == nil
	})

	// A lease taken from its holder behind its back (here: purged by an
	// operator) is lost at the holder's next renewal.
	kv, err := srv.Bucket(ctx, queue.BucketLeases)
	if err != nil {
		t.Fatal(err)
	}
	if err := kv.Purge(ctx, queue.KVKey("gc")); err != nil {
		t.Fatal(err)
	}
	c := peer(t, srv, "node-c")
	if _, err := c.Lease(ctx, "gc"); err != nil {
		t.Fatalf("c takes the purged lease: %v", err)
	}
	if err := lb.Renew(ctx); !errors.Is(err, queue.ErrLeaseLost) {
		t.Fatalf("b renews a lease c holds: got %v, want ErrLeaseLost", err)
	}
	select {
	case <-lb.Lost():
	default:
		t.Fatal("Lost not closed after a failed renewal")
	}
	lctx, cancel := lb.Context(ctx)
	defer cancel()
	eventually(t, 5*time.Second, "the lost lease's context to end", func() bool { return errors.Is(context.Cause(lctx), queue.ErrLeaseLost) })
}

// A renewal written to the bucket whose answer never came back (it timed
// out under load) leaves the key at a revision its holder does not know:
// the next renewal finds the key still names the holder and keeps the
// lease, where a key naming another node loses it.
func TestLeaseSurvivesARenewalAnsweredTooLate(t *testing.T) {
	ctx := ctxTimeout(t, 30*time.Second)
	srv := queuetest.Start(t)
	a := peer(t, srv, "node-a")
	l, err := a.Lease(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	kv, err := srv.Bucket(ctx, queue.BucketLeases)
	if err != nil {
		t.Fatal(err)
	}
	// The renewal that landed unseen.
	landed, err := kv.Update(ctx, queue.KVKey("s"), []byte("node-a"), l.Revision())
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Renew(ctx); err != nil {
		t.Fatalf("renewing after a renewal landed unseen: %v", err)
	}
	if !l.Held() || l.Revision() <= landed {
		t.Fatalf("held %v at revision %d, want held after revision %d", l.Held(), l.Revision(), landed)
	}

	// A write naming another node is not this node's renewal.
	if _, err := kv.Update(ctx, queue.KVKey("s"), []byte("node-b"), l.Revision()); err != nil {
		t.Fatal(err)
	}
	if err := l.Renew(ctx); !errors.Is(err, queue.ErrLeaseLost) {
		t.Fatalf("renewing a lease the bucket gives node-b: got %v, want ErrLeaseLost", err)
	}
}

// On a cluster, a node whose settings differ from the streams', consumer's
// and buckets' it finds logs the difference and keeps them; told to
// migrate, it applies its own.
func TestSharedSettingsKeptUnlessMigrating(t *testing.T) {
	ctx := ctxTimeout(t, 30*time.Second)
	srv := queuetest.Start(t)
	if _, err := srv.Bucket(ctx, queue.BucketLeases); err != nil {
		t.Fatal(err)
	}
	var logs testutil.Buffer
	cfg := queuetest.Config(t)
	cfg.URL, cfg.Dir = srv.ClientURL(), ""
	cfg.DuplicateWindow = 3 * time.Minute
	cfg.MaxDeliver = 7
	cfg.MaxAckPending = 2000
	cfg.LeaseTTL = 45 * time.Second
	other, err := queue.Open(ctx, cfg, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Bucket(ctx, queue.BucketLeases); err != nil {
		t.Fatal(err)
	}
	other.Close()
	for _, want := range []string{"stream=EVENTS", "duplicate_window: found " + queue.Defaults().DuplicateWindow.String() + ", this node wants 3m0s", "max_deliver: found 3, this node wants 7", "max_ack_pending: found 10000, this node wants 2000", "bucket=viaduct_leases", "ttl 30s, this node wants 45s"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log does not say %q:\n%s", want, logs.String())
		}
	}
	events, err := srv.JetStream().Stream(ctx, queue.StreamEvents)
	if err != nil {
		t.Fatal(err)
	}
	if got := events.CachedInfo().Config.Duplicates; got != queue.Defaults().DuplicateWindow {
		t.Fatalf("a node without migrate changed EVENTS' duplicate window to %s", got)
	}

	cfg.Migrate = true
	m := open(t, cfg)
	defer m.Close()
	if _, err := m.Bucket(ctx, queue.BucketLeases); err != nil {
		t.Fatal(err)
	}
	events, err = srv.JetStream().Stream(ctx, queue.StreamEvents)
	if err != nil {
		t.Fatal(err)
	}
	if got := events.CachedInfo().Config.Duplicates; got != 3*time.Minute {
		t.Fatalf("migrate left EVENTS' duplicate window at %s", got)
	}
	kv, err := srv.JetStream().KeyValue(ctx, queue.BucketLeases)
	if err != nil {
		t.Fatal(err)
	}
	st, err := kv.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.TTL() != 45*time.Second {
		t.Fatalf("migrate left the lease TTL at %s", st.TTL())
	}
	cons, err := srv.JetStream().Consumer(ctx, queue.StreamChanges, cfg.Consumer)
	if err != nil {
		t.Fatal(err)
	}
	if got := cons.CachedInfo().Config.MaxAckPending; got != 2000 {
		t.Fatalf("migrate left the CHANGES consumer's max_ack_pending at %d", got)
	}
}
