// Package gc reclaims what nothing refers to any more: blobs that no held
// resource, change-log entry or dump package names (in the directory or
// S3 store), change-log entries and deleted resources past their
// retention, and dump packages the republisher has superseded.
//
// A blob is deleted only when two collections at least Grace apart both
// found it unreferenced, and the store says it was neither committed nor
// touched since the first of them (storage.Sweeper.DeleteIdle): a fetch
// worker that commits the same bytes again, or finds them stored and
// touches them before it publishes its event, keeps them; one whose event
// was published before the second collection read the catalog is in its
// references. Grace must therefore outlast the time from a worker finding
// a blob to its event being applied, by far.
//
// When several nodes share one store, only one may collect at a time
// (Turn: the queue's lease called Lease), and it collects from its own
// catalog: every catalog is a view of the same EVENTS, so the references
// of a catalog at sequence S are those of any other at S. Every node
// reports, through Positions, how far its catalog has applied EVENTS and
// the dump packages it serves; the collecting node deletes nothing that
// a lagging node's catalog or another node's packages still name. See
// docs/gc.md for what that leaves to the operator.
//
// The package never writes a blob and never deletes one that a catalog
// read refers to.
package gc
