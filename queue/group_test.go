package queue_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
)

// publishGroup queues changes from..to-1 with PublishChanges.
func publishGroup(t *testing.T, q *queue.Queue, from, to int) {
	t.Helper()
	var cs []*viaduct.Change
	for i := from; i < to; i++ {
		cs = append(cs, testChange(i))
	}
	if err := q.PublishChanges(context.Background(), cs); err != nil {
		t.Fatalf("PublishChanges: %v", err)
	}
}

// takeGroup queues changes 0..n-1 as a group and takes them all.
func takeGroup(t *testing.T, n int) (*queue.Queue, *queue.ChangeStream, []*queue.ChangeMsg) {
	t.Helper()
	q := queuetest.Start(t)
	publishGroup(t, q, 0, n)
	s, err := q.Changes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ms []*queue.ChangeMsg
	for range n {
		ms = append(ms, next(t, s))
	}
	return q, s, ms
}

// A batch goes into groups of GroupMax changes; the workers get every
// change on its own, in order, and a group leaves CHANGES once every
// change in it has its verdict.
func TestGroupIsAckedWhenEveryChangeIsDone(t *testing.T) {
	q := queuetest.Start(t)
	ctx := context.Background()
	n := 2*queue.GroupMax + 6
	publishGroup(t, q, 0, n)
	if got := streamMsgs(t, q, queue.StreamChanges); got != 3 {
		t.Fatalf("CHANGES holds %d messages for %d changes, want 3", got, n)
	}
	s, err := q.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var first []*queue.ChangeMsg
	for i := range queue.GroupMax {
		m := next(t, s)
		if want := testChange(i).URI; m.Change.URI != want {
			t.Fatalf("change %d is %s, want %s", i, m.Change.URI, want)
		}
		if m.Delivered != 1 {
			t.Errorf("change %d: delivered %d, want 1", i, m.Delivered)
		}
		first = append(first, m)
	}
	for _, m := range first[1:] {
		if err := m.Ack(ctx); err != nil {
			t.Fatal(err)
		}
	}
	takeAndAck := func(from, to int) {
		for i := from; i < to; i++ {
			m := next(t, s)
			if want := testChange(i).URI; m.Change.URI != want {
				t.Fatalf("change %d is %s, want %s", i, m.Change.URI, want)
			}
			m.Ack(ctx)
		}
	}
	// The first group waits for its first change's verdict: once the
	// second, acked whole after it, has left CHANGES, it is still there.
	takeAndAck(queue.GroupMax, 2*queue.GroupMax)
	if msgs, seq := changesLeft(t, q, 2); msgs != 2 || seq != first[0].Seq {
		t.Fatalf("CHANGES holds %d messages from seq %d with a change of the first group (seq %d) unfinished, want it and the third", msgs, seq, first[0].Seq)
	}
	if err := first[0].Ack(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "the first group to leave CHANGES", func() bool { return streamMsgs(t, q, queue.StreamChanges) == 1 })
	takeAndAck(2*queue.GroupMax, n)
	eventually(t, 5*time.Second, "CHANGES to empty", func() bool { return streamMsgs(t, q, queue.StreamChanges) == 0 })
}

// A change of a group handed back comes back on its own, after the delay
// asked for, with its deliveries counted; the rest of its group is done.
func TestGroupChangeHandedBackComesBackAlone(t *testing.T) {
	q, s, ms := takeGroup(t, 3)
	ctx := context.Background()
	a, b, c := ms[0], ms[1], ms[2]
	a.Ack(ctx)
	c.Ack(ctx)
	const delay = 400 * time.Millisecond
	handed := time.Now()
	if err := b.Nak(delay); err != nil {
		t.Fatal(err)
	}
	m := next(t, s)
	if waited := time.Since(handed); waited < delay {
		t.Errorf("handed back with a delay of %s, delivered again after %s", delay, waited)
	}
	if m.Change.URI != b.Change.URI || m.Delivered != 2 {
		t.Fatalf("came back: %s, delivered %d; want %s, delivered 2", m.Change.URI, m.Delivered, b.Change.URI)
	}
	// Handed back again at once: the third delivery.
	if err := m.Nak(0); err != nil {
		t.Fatal(err)
	}
	m = next(t, s)
	if m.Change.URI != b.Change.URI || m.Delivered != 3 {
		t.Fatalf("came back: %s, delivered %d; want %s, delivered 3", m.Change.URI, m.Delivered, b.Change.URI)
	}
	m.Ack(ctx)
	eventually(t, 5*time.Second, "CHANGES to empty", func() bool { return streamMsgs(t, q, queue.StreamChanges) == 0 })
}

// A change of a group that fails for good is a dead letter of its own,
// holding that change alone.
func TestGroupChangeDeadLetteredAlone(t *testing.T) {
	q, s, ms := takeGroup(t, 3)
	ctx := context.Background()
	a, b, c := ms[0], ms[1], ms[2]
	if err := b.DeadLetter(ctx, "mismatch: md5", map[string]string{"expected": "x"}); err != nil {
		t.Fatal(err)
	}
	a.Ack(ctx)
	c.Ack(ctx)
	dls, err := q.DeadLetters(ctx, 10)
	if err != nil || len(dls) != 1 {
		t.Fatalf("dead letters: %v, %v", dls, err)
	}
	var got viaduct.Change
	if err := got.Decode(dls[0].Payload); err != nil || got.URI != b.Change.URI {
		t.Fatalf("dead letter holds %q (%v), want the change of %s alone", dls[0].Payload, err, b.Change.URI)
	}
	if dls[0].Reason != "mismatch: md5" || dls[0].Evidence["expected"] != "x" {
		t.Errorf("dead letter %+v", dls[0])
	}
	eventually(t, 5*time.Second, "CHANGES to empty", func() bool { return streamMsgs(t, q, queue.StreamChanges) == 0 })
	// Queued again, it is a change of its own.
	if _, err := q.RetryDeadLetter(ctx, dls[0].Seq); err != nil {
		t.Fatal(err)
	}
	if m := next(t, s); m.Change.URI != b.Change.URI {
		t.Fatalf("retried: %s, want %s", m.Change.URI, b.Change.URI)
	}
}

// A group whose worker died is delivered again whole; one that runs out
// of deliveries without verdicts becomes a dead letter for each change.
func TestGroupWithoutVerdictsIsDeliveredAgainThenRescued(t *testing.T) {
	q := queuetest.Start(t, func(c *queue.Config) { c.AckWait = 300 * time.Millisecond; c.MaxDeliver = 2 })
	ctx := context.Background()
	publishGroup(t, q, 0, 3)
	s, err := q.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []uint64{1, 2} {
		for i := range 3 {
			m := next(t, s)
			if m.Change.URI != testChange(i).URI || m.Delivered != want {
				t.Fatalf("got %s delivered %d, want %s delivered %d", m.Change.URI, m.Delivered, testChange(i).URI, want)
			}
		}
	}
	var dls []queue.DeadLetter
	eventually(t, 10*time.Second, "the group never dead-lettered", func() bool {
		pctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		if m, err := s.Next(pctx); err == nil {
			t.Errorf("change %s delivered past max_deliver", m.Change.URI)
		}
		cancel()
		dls, err = q.DeadLetters(ctx, 10)
		return err == nil && len(dls) == 3
	})
	for i, d := range dls {
		var c viaduct.Change
		if err := c.Decode(d.Payload); err != nil || c.URI != testChange(i).URI {
			t.Errorf("dead letter %d holds %q (%v)", i, d.Payload, err)
		}
		if !strings.Contains(d.Reason, "no verdict after 2 deliveries") {
			t.Errorf("reason %q", d.Reason)
		}
	}
	eventually(t, 5*time.Second, "CHANGES to empty", func() bool { return streamMsgs(t, q, queue.StreamChanges) == 0 })
}

// A group with a change that does not decode hands out the others and
// dead-letters that one alone.
func TestGroupWithAnUndecodableChange(t *testing.T) {
	q := queuetest.Start(t)
	ctx := context.Background()
	a, _ := testChange(0).Encode()
	c, _ := testChange(2).Encode()
	msg := nats.NewMsg(queue.ChangeSubject(testChange(0).Source))
	msg.Header.Set(queue.HeaderChanges, "3")
	msg.Data = append(append(a, "\n{not json\n"...), c...)
	if _, err := q.JetStream().PublishMsg(ctx, msg); err != nil {
		t.Fatal(err)
	}
	s, err := q.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 2} {
		m := next(t, s)
		if m.Change.URI != testChange(i).URI {
			t.Fatalf("got %s, want %s", m.Change.URI, testChange(i).URI)
		}
		m.Ack(ctx)
	}
	dls, err := q.DeadLetters(ctx, 10)
	if err != nil || len(dls) != 1 || string(dls[0].Payload) != "{not json" || dls[0].Kind() != "undecodable" {
		t.Fatalf("dead letters: %+v, %v", dls, err)
	}
	eventually(t, 5*time.Second, "CHANGES to empty", func() bool { return streamMsgs(t, q, queue.StreamChanges) == 0 })
}

// A change of a group given a verdict twice counts once: the group is
// not acked while another change in it is still being handled.
func TestGroupCountsEachVerdictOnce(t *testing.T) {
	q, s, ms := takeGroup(t, 2)
	ctx := context.Background()
	a, b := ms[0], ms[1]
	a.Ack(ctx)
	a.Ack(ctx)
	if err := a.Nak(0); err != nil {
		t.Fatal(err)
	}
	// A second group, acked whole after them, leaves CHANGES; the first
	// is still there, and nothing was queued again.
	publishGroup(t, q, 2, 4)
	next(t, s).Ack(ctx)
	next(t, s).Ack(ctx)
	if msgs, seq := changesLeft(t, q, 1); msgs != 1 || seq != a.Seq {
		t.Fatalf("CHANGES holds %d messages from seq %d with a change of the group (seq %d) unfinished, want the group alone", msgs, seq, a.Seq)
	}
	b.Ack(ctx)
	eventually(t, 5*time.Second, "CHANGES to empty", func() bool { return streamMsgs(t, q, queue.StreamChanges) == 0 })
}

// Groups are pulled two at a time, not sixteen: each one taken has its ack
// timer running until its last change is done.
func TestGroupsArePulledFewAtATime(t *testing.T) {
	q := queuetest.Start(t)
	ctx := context.Background()
	publishGroup(t, q, 0, 10*queue.GroupMax)
	s, err := q.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := q.JetStream().Consumer(ctx, queue.StreamChanges, q.Config().Consumer)
	if err != nil {
		t.Fatal(err)
	}
	for i := range queue.GroupMax + 1 {
		next(t, s)
		info, err := cons.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.NumAckPending > 3 {
			t.Fatalf("after %d changes taken, %d groups are out", i+1, info.NumAckPending)
		}
	}
}

// A group holds at most GroupMaxBytes of changes: changes with long URIs
// go into more, smaller groups, all of them delivered in order.
func TestGroupsAreBoundedInBytes(t *testing.T) {
	q := queuetest.Start(t)
	ctx := context.Background()
	var cs []*viaduct.Change
	for i := range queue.GroupMax {
		c := testChange(i)
		c.URI += "/" + strings.Repeat("x", 9000)
		cs = append(cs, c)
	}
	if err := q.PublishChanges(ctx, cs); err != nil {
		t.Fatal(err)
	}
	if got := streamMsgs(t, q, queue.StreamChanges); got < 3 {
		t.Fatalf("%d changes of 9 KB in %d messages, want at least 3 of at most %d bytes", len(cs), got, queue.GroupMaxBytes)
	}
	s, err := q.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cs {
		if m := next(t, s); m.Change.URI != c.URI {
			t.Fatalf("change %d is %.60s..., want %.60s...", i, m.Change.URI, c.URI)
		}
	}
}
