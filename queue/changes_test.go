package queue_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
)

// secondNode connects another queue to q's embedded server, as a worker
// on another machine would connect to the cluster.
func secondNode(t *testing.T, q *queue.Queue) *queue.Queue {
	t.Helper()
	cfg := q.Config()
	cfg.URL = q.ClientURL()
	cfg.Registerer = nil
	other, err := queue.Open(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("open second node: %v", err)
	}
	t.Cleanup(func() { other.Close() })
	return other
}

func TestWorkersShareChangesOnce(t *testing.T) {
	q := queuetest.Start(t)
	other := secondNode(t, q)
	ctx := context.Background()
	const n = 40
	for i := range n {
		if err := q.PublishChange(ctx, testChange(i)); err != nil {
			t.Fatal(err)
		}
	}

	// A change held by one worker is not handed to the other.
	a, err := q.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := other.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ma, mb := next(t, a), next(t, b)
	if ma.Seq == mb.Seq {
		t.Fatalf("both workers got change %d", ma.Seq)
	}

	var mu sync.Mutex
	seen := map[string]int{ma.Change.URI: 1, mb.Change.URI: 1}
	perWorker := []int{1, 1}
	for _, m := range []*queue.ChangeMsg{ma, mb} {
		if err := m.Ack(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for w, s := range []*queue.ChangeStream{a, b} {
		wg.Go(func() {
			for {
				mctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
				m, err := s.Next(mctx)
				cancel()
				if errors.Is(err, context.DeadlineExceeded) {
					return // drained
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				seen[m.Change.URI]++
				perWorker[w]++
				mu.Unlock()
				if err := m.Ack(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if len(seen) != n {
		t.Fatalf("processed %d distinct changes, want %d", len(seen), n)
	}
	for uri, c := range seen {
		if c != 1 {
			t.Errorf("%s processed %d times", uri, c)
		}
	}
	testutil.AcksTaken(t, q.JetStream(), queue.StreamChanges)
	if got := streamMsgs(t, q, queue.StreamChanges); got != 0 {
		t.Errorf("CHANGES still holds %d acked changes", got)
	}
	t.Logf("per worker: %v", perWorker)
}

func TestNakRedelivers(t *testing.T) {
	q := queuetest.Start(t)
	ctx := context.Background()
	if err := q.PublishChange(ctx, testChange(1)); err != nil {
		t.Fatal(err)
	}
	s, err := q.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m := next(t, s)
	if m.Delivered != 1 || m.LastAttempt() {
		t.Fatalf("first delivery: Delivered=%d LastAttempt=%v", m.Delivered, m.LastAttempt())
	}
	if err := m.Nak(0); err != nil {
		t.Fatal(err)
	}
	again := next(t, s)
	if again.Seq != m.Seq || again.Delivered != 2 || again.Change.URI != m.Change.URI {
		t.Fatalf("redelivery: seq %d delivered %d uri %s; want seq %d delivered 2 uri %s",
			again.Seq, again.Delivered, again.Change.URI, m.Seq, m.Change.URI)
	}
	if err := again.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	// The ack is not confirmed: the server removes the change soon after.
	testutil.Eventually(t, 10*time.Second, "the acked change to leave CHANGES", func() bool {
		return streamMsgs(t, q, queue.StreamChanges) == 0
	})
}

func TestLastAttemptIsDeadLettered(t *testing.T) {
	reg := prometheus.NewRegistry()
	q := queuetest.Start(t, func(c *queue.Config) { c.Registerer = reg })
	ctx := context.Background()
	want := testChange(7)
	if err := q.PublishChange(ctx, want); err != nil {
		t.Fatal(err)
	}
	s, err := q.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var m *queue.ChangeMsg
	for {
		m = next(t, s)
		if m.LastAttempt() {
			break
		}
		if err := m.Nak(0); err != nil {
			t.Fatal(err)
		}
	}
	if m.Delivered != uint64(q.Config().MaxDeliver) {
		t.Fatalf("LastAttempt true at delivery %d, max_deliver %d", m.Delivered, q.Config().MaxDeliver)
	}
	evidence := map[string]string{"expected_sha256": strings.Repeat("a", 64), "actual_sha256": strings.Repeat("b", 64), "url": want.URI}
	if err := m.DeadLetter(ctx, "hash mismatch\nafter 3 attempts", evidence); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "dead-lettered change still in CHANGES", func() bool {
		return streamMsgs(t, q, queue.StreamChanges) == 0
	})
	dls, err := q.DeadLetters(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(dls) != 1 {
		t.Fatalf("%d dead letters, want 1", len(dls))
	}
	d := dls[0]
	if d.Reason != "hash mismatch after 3 attempts" || d.Stream != queue.StreamChanges || d.OrigSeq != m.Seq || d.Delivered != 3 {
		t.Errorf("dead letter = %+v", d)
	}
	if d.Subject != queue.ChangeSubject(want.Source) {
		t.Errorf("subject %q, want %q", d.Subject, queue.ChangeSubject(want.Source))
	}
	for k, v := range evidence {
		if d.Evidence[k] != v {
			t.Errorf("evidence %s = %q, want %q", k, d.Evidence[k], v)
		}
	}
	var got viaduct.Change
	if err := json.Unmarshal(d.Payload, &got); err != nil || got.MsgID() != want.MsgID() {
		t.Errorf("payload is not the original change: %v %s", err, d.Payload)
	}
	if c := counter(t, reg, "viaduct_queue_dead_lettered_total", queue.StreamChanges); c != 1 {
		t.Errorf("dead_lettered counter = %v, want 1", c)
	}
}

func TestUndecodableChangeIsDeadLettered(t *testing.T) {
	q := queuetest.Start(t)
	ctx := context.Background()
	if _, err := q.JetStream().Publish(ctx, queue.ChangeSubject("broken"), []byte("<not json>")); err != nil {
		t.Fatal(err)
	}
	if err := q.PublishChange(ctx, testChange(1)); err != nil {
		t.Fatal(err)
	}
	s, err := q.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m := next(t, s)
	if m.Change.URI != testChange(1).URI {
		t.Fatalf("got %s, want the valid change after the poison one", m.Change.URI)
	}
	if err := m.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	dls, err := q.DeadLetters(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(dls) != 1 || !strings.Contains(dls[0].Reason, "decode change") || string(dls[0].Payload) != "<not json>" ||
		dls[0].Subject != queue.ChangeSubject("broken") {
		t.Fatalf("dead letters = %+v", dls)
	}
	eventually(t, 5*time.Second, "CHANGES not empty", func() bool { return streamMsgs(t, q, queue.StreamChanges) == 0 })
}

// A worker that fails the last delivery without dead-lettering it (here a
// Nak, as a crash or a timeout would) does not lose the change.
func TestChangeOutOfDeliveriesIsRescued(t *testing.T) {
	q := queuetest.Start(t, func(c *queue.Config) { c.MaxDeliver = 2 })
	ctx := context.Background()
	if err := q.PublishChange(ctx, testChange(3)); err != nil {
		t.Fatal(err)
	}
	s, err := q.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := next(t, s).Nak(0); err != nil {
			t.Fatal(err)
		}
	}
	var dls []queue.DeadLetter
	eventually(t, 10*time.Second, "change never dead-lettered", func() bool {
		// A waiting pull is what makes the server notice the exhausted change.
		pctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		if m, err := s.Next(pctx); err == nil {
			t.Errorf("change %d delivered past max_deliver", m.Seq)
		}
		cancel()
		dls, err = q.DeadLetters(ctx, 10)
		return err == nil && len(dls) == 1
	})
	if !strings.Contains(dls[0].Reason, "no verdict after 2 deliveries") {
		t.Errorf("reason %q", dls[0].Reason)
	}
	eventually(t, 5*time.Second, "CHANGES not empty", func() bool { return streamMsgs(t, q, queue.StreamChanges) == 0 })
}

// TestStopEndsPullPastDeadline: a worker's deadline (the fetch pool's
// poll of its lot) passes while its pull waits on the server, and a stop
// comes after that. The stop ends the pull at once, as one before the
// deadline does, rather than the pull running out its poll of 5 s with the
// node's shutdown waiting on it.
func TestStopEndsPullPastDeadline(t *testing.T) {
	q := queuetest.Start(t)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	s, err := q.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(50 * time.Millisecond)
	done := make(chan error, 1)
	go func() {
		_, err := s.NextBefore(ctx, deadline)
		done <- err
	}()
	eventually(t, 4*time.Second, "a pull waiting on the server past the deadline", func() bool {
		return time.Now().After(deadline) && pullsWaiting(t, q) > 0
	})
	stop()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the stop after the deadline ended the wait with %v, want context.Canceled (the pull ended by the stop)", err)
	}
}

// pullsWaiting is how many pull requests of q's consumer of CHANGES wait
// on the server.
func pullsWaiting(t *testing.T, q *queue.Queue) int {
	t.Helper()
	c, err := q.JetStream().Consumer(context.Background(), queue.StreamChanges, q.Config().Consumer)
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.NumWaiting
}
