package queue_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
)

// TestRequestsEndWithoutTheServer: with the server gone, a publish and a
// read of the dead letters made under a context that would allow an hour
// (a harvester pass's) fail within publish_timeout, so that the caller
// retries later instead of waiting that hour.
func TestRequestsEndWithoutTheServer(t *testing.T) {
	q := queuetest.Start(t, func(c *queue.Config) { c.PublishTimeout = 300 * time.Millisecond })
	queue.StopServer(q)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()

	done := make(chan error, 2)
	go func() {
		done <- q.PublishChange(ctx, &viaduct.Change{Source: "s", Collection: "s", URI: "http://s.example/1", Op: "created", Time: time.Now()})
	}()
	go func() {
		done <- q.ScanDeadLetters(ctx, "s", 0, func(queue.DeadLetter) bool { return true })
	}()
	for i := range 2 {
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("request %d succeeded without a server", i)
			}
			if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
				t.Errorf("request %d waited out the caller's hour: %v", i, err)
			}
		case <-time.After(time.Minute):
			t.Fatalf("a request still waiting a minute after the server stopped (publish_timeout 300ms)")
		}
	}
}
