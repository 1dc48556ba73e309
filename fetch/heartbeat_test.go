package fetch

import (
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/sim"
)

// TestSlowTransferKeepsItsChange: a transfer that lasts longer than the
// queue's ack wait is not handed to a second worker, because the worker
// tells the queue it is still working.
func TestSlowTransferKeepsItsChange(t *testing.T) {
	srv := startSim(t, sim.Config{Resources: 1, MinSize: 4096, MaxSize: 4096})
	if err := srv.SetFault("/res/1", sim.Fault{Trickle: 500 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	q := startQueue(t, func(c *queue.Config) { c.AckWait = time.Second })
	store, _ := dirStore(t)
	changes := simChanges(t, srv)
	publishAndRun(t, q, store, srv, changes)
	checkStored(t, q, store, srv, changes)
	if n := srv.Requests()["/res/1"]; n != 1 {
		t.Errorf("slow bitstream requested %d times, want 1", n)
	}
}
