package queue_test

import (
	"context"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
)

// TestBacklog: changes count from being queued until their worker acks
// them, taken or not.
func TestBacklog(t *testing.T) {
	q := queuetest.Start(t)
	ctx := context.Background()
	backlog := func() uint64 {
		t.Helper()
		n, err := q.Backlog(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := backlog(); n != 0 {
		t.Fatalf("empty queue: backlog %d", n)
	}
	var batch []*viaduct.Change
	for i := range 5 {
		batch = append(batch, testChange(i))
	}
	if err := q.PublishChanges(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if n := backlog(); n != 5 {
		t.Fatalf("after queueing 5: backlog %d", n)
	}
	cs, err := q.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m, err := cs.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := backlog(); n != 5 {
		t.Errorf("one change taken, not acked: backlog %d, want 5", n)
	}
	if err := m.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "the acked change to leave the backlog", func() bool { return backlog() == 4 })
}
