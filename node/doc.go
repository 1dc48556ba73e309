// Package node wires every role of viaduct into one process: the queue
// (embedded NATS or an external cluster), the blob store, the catalog and
// the applier that keeps it from EVENTS, harvesters, fetch workers, the
// republisher and the operator's HTTP endpoints (metrics, health).
//
// It owns start-up order and shutdown: every goroutine it starts is stopped
// and waited for before Run returns. It holds no state of its own; what a
// node knows lives in NATS, the blob store and its catalog.
package node
