package testutil

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// StreamMsgs is how many messages stream holds now, failing the test if
// the stream cannot be read.
func StreamMsgs(t testing.TB, js jetstream.JetStream, stream string) uint64 {
	t.Helper()
	n, err := ReadStreamMsgs(context.Background(), js, stream)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// ReadStreamMsgs is how many messages stream holds now, or why the
// server did not say within ctx.
func ReadStreamMsgs(ctx context.Context, js jetstream.JetStream, stream string) (uint64, error) {
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return 0, fmt.Errorf("stream %s: %w", stream, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("stream %s info: %w", stream, err)
	}
	return info.State.Msgs, nil
}

// AcksTaken waits until no consumer of stream holds a delivered message
// still waiting for its acknowledgement. A worker's ack is not confirmed
// (queue.ChangeMsg.Ack), so a test that counts what a stream holds right
// after acking may count messages whose acks are still on their way.
func AcksTaken(t testing.TB, js jetstream.JetStream, stream string) {
	t.Helper()
	ctx := context.Background()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatalf("stream %s: %v", stream, err)
	}
	Eventually(t, 10*time.Second, "the acks on "+stream+" to be taken", func() bool {
		l := s.ListConsumers(ctx)
		pending := 0
		for info := range l.Info() {
			pending += info.NumAckPending
		}
		if err := l.Err(); err != nil {
			t.Fatalf("consumers of %s: %v", stream, err)
		}
		return pending == 0
	})
}
