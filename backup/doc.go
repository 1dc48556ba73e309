// Package backup copies a node's state out and puts it back: the
// operator's backups (a tar of the catalog and, with the embedded NATS
// server, every stream, taken by the running node and restored on a new
// data directory), and the catalog snapshots the nodes write to the blob
// store on a schedule so that a new node, or one whose disk was lost,
// starts from the newest snapshot and the tail of EVENTS rather than
// from the first event.
//
// It owns the formats (manifests, the snapshot objects' names), their
// checks (every file against its sha-256, the catalog's integrity and
// schema) and the snapshots' schedule and retention. It must never put a
// copy in place that did not verify whole, never overwrite a node's
// data, never delete a snapshot before a newer one is verified written,
// and never let a node start on a catalog that misses events EVENTS no
// longer holds: it refuses, and says what is missing and what to do.
package backup
