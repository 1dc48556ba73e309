// Package fixity is the background audit of the blob store: it re-reads
// every copy the catalog holds, slowly, and checks that its bytes still
// hash to their key (their sha-256), so that a bit flipped on a disk or in
// a bucket is found rather than served until the Source changes the
// resource.
//
// It owns the walk (the held resources of the catalog in key order, a
// page at a time, resumed from a cursor kept in the catalog across
// restarts), its pace (a budget of bytes a second), what it counts and
// shows (metrics and Status), and what it does with a bad copy: the copy
// is quarantined first, moved out from under its key by the store, so
// that it is never served meanwhile (the republisher answers a missing
// blob with an error, never with other bytes), then a change marked as a
// repair (viaduct.Change.Repair) is queued on CHANGES for each resource
// whose copy it was, so that a fetch worker GETs the bitstream from the
// Source again and verifies it like any ingest.
//
// In a cluster only the node holding the audit's turn (a lease, see
// node/fixity.go) audits a given blob store.
//
// The package never writes a blob, never deletes one (a quarantined blob
// is kept, out of the way, for an operator) and never publishes an event:
// the bytes that replace a bad copy come only through the fetch workers'
// verified path.
package fixity
