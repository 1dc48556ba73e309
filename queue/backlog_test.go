package queue_test

import (
	"context"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
)

// TestBacklog: messages count from being queued until they are acked,
// taken or not; a group of changes until every change in it is done.
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
	if n := backlog(); n != 1 {
		t.Fatalf("after queueing a group of 5: backlog %d, want 1", n)
	}
	if err := q.PublishChange(ctx, testChange(5)); err != nil {
		t.Fatal(err)
	}
	if n := backlog(); n != 2 {
		t.Fatalf("and one change alone: backlog %d, want 2", n)
	}
	cs, err := q.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var group []*queue.ChangeMsg
	for range 5 {
		m, err := cs.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		group = append(group, m)
	}
	for _, m := range group[:4] {
		if err := m.Ack(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// The change alone, acked after four of the group's five, leaves;
	// the group stays.
	alone, err := cs.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := alone.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	if _, seq := changesLeft(t, q, 1); seq != group[0].Seq {
		t.Errorf("four of the group's five acked: CHANGES begins at seq %d, want the group's %d", seq, group[0].Seq)
	}
	if n := backlog(); n != 1 {
		t.Errorf("four of the group's five acked: backlog %d, want 1", n)
	}
	if err := group[4].Ack(ctx); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "the finished group to leave the backlog", func() bool { return backlog() == 0 })
}

// TestBacklogs: each Source's messages are counted under its subject, and
// leave the count when acknowledged.
func TestBacklogs(t *testing.T) {
	q := queuetest.Start(t)
	ctx := context.Background()
	if err := q.PublishChanges(ctx, []*viaduct.Change{testChangeOf("a", 0), testChangeOf("a", 1)}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := q.PublishChange(ctx, testChangeOf("b c", 10+i)); err != nil {
			t.Fatal(err)
		}
	}
	total, by, err := q.Backlogs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if total != 4 || by[queue.ChangeSubject("a")] != 1 || by[queue.ChangeSubject("b c")] != 3 {
		t.Fatalf("backlogs: total %d, by subject %v; want 4, a group of a and three changes of b c", total, by)
	}
	cs, err := q.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		m, err := cs.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Ack(ctx); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Eventually(t, 10*time.Second, "the group of a acknowledged", func() bool {
		total, by, err := q.Backlogs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return total == 3 && by[queue.ChangeSubject("a")] == 0 && by[queue.ChangeSubject("b c")] == 3
	})
}
