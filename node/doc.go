// Package node wires every role of viaduct into one process: the queue
// (embedded NATS or an external cluster), the blob store, the catalog and
// the applier that keeps it from EVENTS, harvesters, fetch workers, the
// republisher behind the public listener, and the operator's HTTP
// endpoints (admin, metrics, health).
//
// It owns start-up order, reloads and shutdown: every goroutine it starts
// is stopped and waited for before Run returns, and a role that stops on
// an error is run again after a backoff (restart.go). Which node
// harvests each Source, and the cursors that go with it, the harvester
// decides (harvester.SourceLeases); which node publishes change
// notifications, package notify; node still chooses the node that
// collects garbage (gc.go), through a lease in NATS. It holds
// no state of its own; what a node knows lives in NATS, the blob store
// and its catalog.
package node
