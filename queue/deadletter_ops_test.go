package queue_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
)

// deadLetterChanges queues one change per URI index of source, takes each
// from CHANGES and dead-letters it with reason, as a worker would.
func deadLetterChanges(t *testing.T, q *queue.Queue, s *queue.ChangeStream, source, reason string, idx ...int) {
	t.Helper()
	ctx := context.Background()
	for _, i := range idx {
		c := testChange(i)
		c.Source = source
		if err := q.PublishChange(ctx, c); err != nil {
			t.Fatal(err)
		}
		m := next(t, s)
		if m.Change.URI != c.URI {
			t.Fatalf("took %s, want %s", m.Change.URI, c.URI)
		}
		if err := m.DeadLetter(ctx, reason, map[string]string{"uri": c.URI}); err != nil {
			t.Fatal(err)
		}
	}
}

func uris(dls []queue.DeadLetter) []string {
	var out []string
	for _, d := range dls {
		var c viaduct.Change
		if err := json.Unmarshal(d.Payload, &c); err != nil {
			out = append(out, "undecodable")
			continue
		}
		out = append(out, fmt.Sprintf("%s %d", d.Source, c.Time.Second()))
	}
	return out
}

func TestDeadLettersListedAndShownBySource(t *testing.T) {
	q := queuetest.Start(t)
	ctx := context.Background()
	s, err := q.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	deadLetterChanges(t, q, s, "a.example repo", "mismatch: sha-256 differs", 1, 2)
	deadLetterChanges(t, q, s, "b/other", "not_found: 404", 3)
	deadLetterChanges(t, q, s, "a.example repo", "forbidden: 403", 4)

	all, err := q.ListDeadLetters(ctx, queue.DeadQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(uris(all)), "[a.example repo 1 a.example repo 2 b/other 3 a.example repo 4]"; got != want {
		t.Fatalf("all dead letters: %s, want %s", got, want)
	}
	a, err := q.ListDeadLetters(ctx, queue.DeadQuery{Source: "a.example repo"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(uris(a)), "[a.example repo 1 a.example repo 2 a.example repo 4]"; got != want {
		t.Fatalf("source a: %s, want %s", got, want)
	}
	page, err := q.ListDeadLetters(ctx, queue.DeadQuery{Source: "a.example repo", After: a[0].Seq, Limit: 1})
	if err != nil || len(page) != 1 || page[0].Seq != a[1].Seq {
		t.Fatalf("second page of one: %v %v, want dead letter %d", uris(page), err, a[1].Seq)
	}
	if kinds := []string{all[0].Kind(), all[2].Kind(), all[3].Kind()}; fmt.Sprint(kinds) != "[mismatch not_found forbidden]" {
		t.Errorf("kinds %v", kinds)
	}

	d, err := q.DeadLetterAt(ctx, all[2].Seq)
	if err != nil {
		t.Fatal(err)
	}
	if d.Source != "b/other" || d.Reason != "not_found: 404" || d.Evidence["uri"] != testChange(3).URI || d.Delivered != 1 {
		t.Errorf("shown dead letter = %+v", d)
	}
	if _, err := q.DeadLetterAt(ctx, all[3].Seq+10); !errors.Is(err, queue.ErrDeadLetterNotFound) {
		t.Errorf("unknown dead letter: %v, want ErrDeadLetterNotFound", err)
	}
	counts, err := q.DeadLetterCounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if counts["a.example repo"] != 3 || counts["b/other"] != 1 || len(counts) != 2 {
		t.Errorf("counts %v", counts)
	}
}

func TestRetriedDeadLetterIsDeliveredAgainAsItWas(t *testing.T) {
	q := queuetest.Start(t)
	ctx := context.Background()
	s, err := q.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	deadLetterChanges(t, q, s, "a.example repo", "mismatch: sha-256 differs", 1)
	dls, err := q.ListDeadLetters(ctx, queue.DeadQuery{})
	if err != nil || len(dls) != 1 {
		t.Fatalf("%d dead letters (%v), want 1", len(dls), err)
	}
	if _, err := q.RetryDeadLetter(ctx, dls[0].Seq); err != nil {
		t.Fatal(err)
	}
	m := next(t, s)
	if m.Change.MsgID() != testChangeOf("a.example repo", 1).MsgID() || m.Delivered != 1 {
		t.Fatalf("retried change %+v delivered %d times, want the original on its first delivery", m.Change, m.Delivered)
	}
	if _, err := q.DeadLetterAt(ctx, dls[0].Seq); !errors.Is(err, queue.ErrDeadLetterNotFound) {
		t.Errorf("retried dead letter still there: %v", err)
	}
	if _, err := q.RetryDeadLetter(ctx, dls[0].Seq); !errors.Is(err, queue.ErrDeadLetterNotFound) {
		t.Errorf("second retry of the same dead letter: %v, want ErrDeadLetterNotFound", err)
	}

	// It fails again: the new dead letter counts the retry.
	if err := m.DeadLetter(ctx, "mismatch: still", nil); err != nil {
		t.Fatal(err)
	}
	again, err := q.ListDeadLetters(ctx, queue.DeadQuery{})
	if err != nil || len(again) != 1 {
		t.Fatalf("%d dead letters (%v), want 1", len(again), err)
	}
	if again[0].Retries != 1 || again[0].Reason != "mismatch: still" {
		t.Errorf("dead letter after one retry: retries %d, reason %q", again[0].Retries, again[0].Reason)
	}
	if streamMsgs(t, q, queue.StreamChanges) != 0 {
		t.Errorf("CHANGES still holds the change dead-lettered twice")
	}
}

func TestDeadLettersRetriedAndPurgedBySourceAndAll(t *testing.T) {
	q := queuetest.Start(t)
	ctx := context.Background()
	s, err := q.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	deadLetterChanges(t, q, s, "a", "transient: reset", 1, 2, 3)
	deadLetterChanges(t, q, s, "b", "upstream: 500", 4, 5)

	n, err := q.RetryDeadLetters(ctx, "b")
	if err != nil || n != 2 {
		t.Fatalf("retry source b: %d, %v; want 2", n, err)
	}
	got := map[string]bool{}
	for range 2 {
		m := next(t, s)
		got[m.Change.URI] = true
		if err := m.Ack(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if !got[testChange(4).URI] || !got[testChange(5).URI] {
		t.Errorf("retried changes %v, want 4 and 5", got)
	}
	counts, err := q.DeadLetterCounts(ctx)
	if err != nil || counts["a"] != 3 || counts["b"] != 0 {
		t.Fatalf("counts after retrying b: %v %v", counts, err)
	}

	a, _ := q.ListDeadLetters(ctx, queue.DeadQuery{Source: "a"})
	if err := q.PurgeDeadLetter(ctx, a[0].Seq); err != nil {
		t.Fatal(err)
	}
	if err := q.PurgeDeadLetter(ctx, a[0].Seq); !errors.Is(err, queue.ErrDeadLetterNotFound) {
		t.Errorf("purging a purged dead letter: %v", err)
	}
	deadLetterChanges(t, q, s, "c", "too_large: 2 GB", 6)
	if n, err := q.PurgeDeadLetters(ctx, "a"); err != nil || n != 2 {
		t.Fatalf("purge source a: %d, %v; want 2", n, err)
	}
	left, _ := q.ListDeadLetters(ctx, queue.DeadQuery{})
	if fmt.Sprint(uris(left)) != "[c 6]" {
		t.Fatalf("left after purging a: %v", uris(left))
	}
	if n, err := q.RetryDeadLetters(ctx, ""); err != nil || n != 1 {
		t.Fatalf("retry all: %d, %v; want 1", n, err)
	}
	m := next(t, s)
	if err := m.DeadLetter(ctx, "too_large: 2 GB", nil); err != nil {
		t.Fatal(err)
	}
	if n, err := q.PurgeDeadLetters(ctx, ""); err != nil || n != 1 {
		t.Fatalf("purge all: %d, %v; want 1", n, err)
	}
	eventually(t, 5*time.Second, "DEADLETTER to be empty", func() bool {
		return streamMsgs(t, q, queue.StreamDead) == 0
	})
}

func testChangeOf(source string, i int) *viaduct.Change {
	c := testChange(i)
	c.Source = source
	return c
}
