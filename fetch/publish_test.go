package fetch

import (
	"testing"

	"github.com/viaduct-mirror/viaduct/sim"
)

// syncPublisher hides the queue's asynchronous publish, so the workers
// wait for each event's ack themselves.
type syncPublisher struct{ Publisher }

// TestSynchronousPublisherStillStoresEverything runs the workers with a
// publisher that cannot publish asynchronously: every change still ends
// with its blob stored, its event published and the change acked.
func TestSynchronousPublisherStillStoresEverything(t *testing.T) {
	srv := startSim(t, sim.Config{Resources: 8, MinSize: 100, MaxSize: 2000})
	q := startQueue(t)
	store, _ := dirStore(t)
	changes := simChanges(t, srv)
	publishAll(t, q, changes)
	deps := queueDeps(t, q, store, clientsFor(t, srv))
	deps.Events = syncPublisher{q}
	if _, ok := deps.Events.(AsyncPublisher); ok {
		t.Fatal("syncPublisher should not publish asynchronously")
	}
	runPool(t, testConfig(), deps)
	checkStored(t, q, store, srv, changes)
}
