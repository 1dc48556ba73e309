package notify_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/notify"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
	"github.com/viaduct-mirror/viaduct/websub"
)

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestHubOutboxOrderAckPurge(t *testing.T) {
	q := queuetest.Start(t)
	ctx := ctxTimeout(t, 30*time.Second)
	o, err := notify.OpenHubOutbox(ctx, q, queue.HubOutConfig{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, b := websub.SubscriptionID("http://x/t", "http://cb/a"), websub.SubscriptionID("http://x/t", "http://cb/b")
	for i := range 3 {
		for _, s := range []string{a, b} {
			if err := o.Append(ctx, s, websub.Delivery{Topic: "http://x/t", Payload: fmt.Appendf(nil, "%s-%d", s, i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A repeat of a payload already queued is stored once.
	if err := o.Append(ctx, a, websub.Delivery{Topic: "http://x/t", Payload: fmt.Appendf(nil, "%s-%d", a, 0)}); err != nil {
		t.Fatal(err)
	}
	if n, _ := o.Len(ctx, a); n != 3 {
		t.Fatalf("queue of a holds %d, want 3", n)
	}
	for i := range 3 {
		d, ok, err := o.Head(ctx, a)
		if err != nil || !ok {
			t.Fatalf("head %d: ok=%v err=%v", i, ok, err)
		}
		if want := fmt.Appendf(nil, "%s-%d", a, i); !bytes.Equal(d.Payload, want) || d.Topic != "http://x/t" {
			t.Fatalf("head %d = %q on %q, want %q", i, d.Payload, d.Topic, want)
		}
		if err := o.Ack(ctx, a, d.Seq); err != nil {
			t.Fatal(err)
		}
		if err := o.Ack(ctx, a, d.Seq); err != nil {
			t.Fatalf("second ack: %v", err)
		}
	}
	if _, ok, err := o.Head(ctx, a); ok || err != nil {
		t.Fatalf("a's queue not empty: ok=%v err=%v", ok, err)
	}
	if n, _ := o.Len(ctx, b); n != 3 {
		t.Fatalf("b's queue holds %d, want 3", n)
	}
	if err := o.Purge(ctx, b); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := o.Head(ctx, b); ok {
		t.Fatal("b's queue not purged")
	}
}

func TestHubOutboxSurvivesReopen(t *testing.T) {
	cfg := queuetest.Config(t)
	ctx := ctxTimeout(t, 30*time.Second)
	open := func() (*queue.Queue, *notify.HubOutbox) {
		q, err := queue.Open(ctx, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		o, err := notify.OpenHubOutbox(ctx, q, queue.HubOutConfig{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return q, o
	}
	q, o := open()
	sub := websub.SubscriptionID("http://x/t", "http://cb/a")
	for i := range 2 {
		if err := o.Append(ctx, sub, websub.Delivery{Topic: "http://x/t", Payload: fmt.Appendf(nil, "p%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	d, _, _ := o.Head(ctx, sub)
	o.Ack(ctx, sub, d.Seq)
	q.Close()
	q, o = open()
	defer q.Close()
	d, ok, err := o.Head(ctx, sub)
	if err != nil || !ok || string(d.Payload) != "p1" {
		t.Fatalf("after reopen head = %q ok=%v err=%v, want p1", d.Payload, ok, err)
	}
}

func TestHubOutboxFullQueueDrops(t *testing.T) {
	q := queuetest.Start(t)
	ctx := context.Background()
	o, err := notify.OpenHubOutbox(ctx, q, queue.HubOutConfig{MaxPerSubscriber: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sub := websub.SubscriptionID("http://x/t", "http://cb/a")
	for i := range 4 {
		if err := o.Append(ctx, sub, websub.Delivery{Topic: "t", Payload: fmt.Appendf(nil, "p%d", i)}); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	if n, _ := o.Len(ctx, sub); n != 2 {
		t.Fatalf("queue holds %d, want 2", n)
	}
	d, _, _ := o.Head(ctx, sub)
	if string(d.Payload) != "p0" {
		t.Fatalf("head %q, want the oldest kept", d.Payload)
	}
	if err := o.Append(ctx, "a.b", websub.Delivery{}); err == nil {
		t.Fatal("a subscription id with a dot was accepted")
	}
}
