// Package node assembles one viaduct process from the roles: it reads the
// configuration (config*.go), opens the queue (embedded NATS or an
// external cluster), the blob store and the catalog, and starts the
// applier, harvesters, fetch workers, the republisher behind the public
// listener, notifications, dumps, garbage collection, the fixity audit,
// catalog snapshots and the operator's listener (admin, metrics, health).
// Before the catalog opens, it lets package backup decide whether the
// node starts on its own catalog or on a snapshot (snapshots.go).
//
// It owns start-up order, reloads and shutdown: every goroutine it starts
// is stopped and waited for before Run returns, and a role that stops on
// an error is run again after a backoff (restart.go). Beside the wiring it
// keeps what belongs to the process as a whole: its readiness (health.go),
// the gauges read from the catalog and the disks (metrics.go, disk*.go),
// the recent rates the status page shows (rates.go), the catalog's WAL
// truncation (wal.go), and the route through which an operator's backup
// of the catalog and the streams is taken (backups.go; the backup itself
// is package backup).
//
// The roles decide for themselves: which node harvests each Source and
// the cursors that go with it (harvester.SourceLeases), which node
// publishes change notifications (package notify), which node collects
// garbage (gc.Lease), audits a store (package fixity) or writes the
// catalog snapshots (package backup), each through a lease in NATS
// (queue.Turn); tracing is set up by internal/telemetry.
// node holds no state of its own; what a node knows lives in NATS, the
// blob store and its catalog.
package node
