package queue_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/queue"
)

// openStoreQueue opens an embedded queue storing in dir whose publishes
// give up after a second.
func openStoreQueue(t *testing.T, dir string) *queue.Queue {
	t.Helper()
	cfg := queue.Defaults()
	cfg.Dir = dir
	cfg.PublishTimeout = time.Second
	cfg.Backoff = nil
	cfg.AckWait = 2 * time.Second
	q, err := queue.Open(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

// TestStoreFullThenGrown: a JetStream store whose file system fills. The
// publish that cannot be written fails (within publish_timeout) and
// StoreFault says why; once the file system is grown the queue restarts
// JetStream by itself, without a new Queue: StoreFault clears, publishing
// works again, and every change stored before is still delivered.
func TestStoreFullThenGrown(t *testing.T) {
	disk := testutil.SmallDisk(t, "8m")
	q := openStoreQueue(t, disk)
	ctx := ctxTimeout(t, 2*time.Minute)
	if err := q.PublishChanges(ctx, []*viaduct.Change{testChange(1), testChange(2)}); err != nil {
		t.Fatal(err)
	}
	if err := q.StoreFault(); err != nil || q.StoreEpoch() != 0 {
		t.Fatalf("store fault before the disk is full: %v (epoch %d)", err, q.StoreEpoch())
	}

	testutil.FillDisk(t, disk)
	// Publish until one fails: the write of a block that no longer fits.
	i := 3
	eventually(t, 30*time.Second, "a publish to fail on the full disk", func() bool {
		err := q.PublishChanges(ctx, []*viaduct.Change{testChange(i)})
		i++
		return errors.Is(err, queue.ErrPublishTimeout)
	})
	eventually(t, 10*time.Second, "StoreFault to say the store cannot be written", func() bool {
		return q.StoreFault() != nil
	})
	t.Logf("store fault: %v", q.StoreFault())
	if e := q.StoreEpoch(); e%2 != 1 {
		t.Errorf("store epoch %d while the store has a fault, want it odd", e)
	}

	testutil.GrowDisk(t, disk, "64m")
	eventually(t, 30*time.Second, "JetStream restarted once the disk is grown", func() bool {
		return q.StoreFault() == nil
	})
	// The fault is over, and the epoch has moved past it: a publish that
	// waited through it knows its failure was the store's.
	if e := q.StoreEpoch(); e == 0 || e%2 != 0 {
		t.Errorf("store epoch %d once the store takes writes again, want it even and past 0", e)
	}
	eventually(t, 30*time.Second, "a publish to succeed again", func() bool {
		return q.PublishChanges(ctx, []*viaduct.Change{testChange(1000)}) == nil
	})
	cs, err := q.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// A change whose publish timed out may have been stored after all
	// (its publisher would send it again, and it would be de-duplicated).
	got := map[string]bool{}
	for !got[testChange(1000).URI] {
		m := next(t, cs)
		got[m.Change.URI] = true
		if err := m.Ack(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []int{1, 2, 1000} {
		if uri := testChange(c).URI; !got[uri] {
			t.Errorf("change %s not delivered after the restart (got %v)", uri, got)
		}
	}
}
