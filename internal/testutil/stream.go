package testutil

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// StreamMsgs is how many messages stream holds now, failing the test if
// the stream cannot be read.
func StreamMsgs(t testing.TB, js jetstream.JetStream, stream string) uint64 {
	t.Helper()
	ctx := context.Background()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatalf("stream %s: %v", stream, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatalf("stream %s info: %v", stream, err)
	}
	return info.State.Msgs
}
