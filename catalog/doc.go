// Package catalog holds the catalog: each node's materialised view of the
// EVENTS stream (the aggregator's own change log), and the Applier that
// keeps it, reading EVENTS through the EventLog it declares; plus the
// harvester's cursors of versions before they moved to the shared
// positions bucket, the list of Sources and a little key/value state.
//
// The catalog is one SQLite file in WAL mode, opened through two pools: a
// single writer connection whose transactions begin IMMEDIATE (so a write
// never fails half-way on a lock upgrade) and a pool of read-only
// connections that read a consistent snapshot while the writer works.
//
// # Durability
//
// The stream sequence of the last applied event is written in the same
// transaction as the event's effect, so the catalog and its position in
// EVENTS can never disagree: after any crash the applier asks LastApplied
// and resumes at the next event. Redelivered events (seq <= LastApplied)
// are skipped, which makes Apply idempotent.
//
// synchronous=NORMAL is used under WAL. A commit survives a crash of the
// process; a power loss or kernel crash may roll back the last commits made
// since the WAL was last synced, but never tears one. Because the sequence
// rolls back with them, the applier re-reads those events from EVENTS and
// applies them again with the same results: adjusted change times depend
// only on the events and their stream timestamps, not on the clock. The
// EVENTS stream's retention therefore has to outlast a checkpoint interval,
// which it does by orders of magnitude.
//
// # Writes
//
// ApplyBatch reads the rows its events name in a few queries, applies the
// events to them in memory in stream order, and writes each row it
// changed once, with its change-log entries, one row a statement, each
// prepared once. A statement of several rows that may fail halfway makes
// SQLite journal every page it changes to a temporary file, in case it
// must undo just that statement: it saved little in the driver and wrote
// more than the WAL did (see resUpsertSQL). A new catalog file has 8 KiB
// pages, so that a resource row (about a kilobyte) fits in its table's
// page instead of spilling into an overflow page; an older file keeps its
// page size.
// What is left of an event's cost is mostly the pages it dirties, above
// all one random page of the md5 index, which the fetch workers' by-hash
// lookups need (the sha-256 index went in schema 6: a declared sha-256 is
// a blob key, looked up in the blob store). Since schema 11 that index is
// on the change log and holds a prefix of the digest and the row's
// integer key, 6 bytes of it since the digests are kept as bytes
// (schemaV12): about 17 bytes an entry, so that it stays in the page
// cache far longer than one holding the resources' whole key did
// (schemaV11).
//
// # Change times
//
// A change's time in the aggregator's change log is the JetStream
// timestamp of its event, raised where needed to one microsecond after the
// collection's previous change: times are strictly increasing per
// collection and so unique per (URI, datetime), even when the stream's
// clock ties or steps back.
//
// # The Source's order
//
// Events of one resource can reach EVENTS out of the Source's order, since
// fetch workers finish in any order. Each resource row therefore keeps the
// Source time of the last statement applied to it (up_order: the upstream
// change time, or a baseline list's at when later), and an event older
// than it is recorded as applied with no effect and no change-log entry;
// at equal times a deletion outranks a copy and a greater sha-256 outranks
// a lesser one. A deletion of a resource without a row leaves a tombstone
// (deleted = 1, seq = 0, no copy) so that its older creation arriving
// later is ignored; tombstones are excluded from every list, count and
// lookup by origin. Every node thus ends in the state of the Source's
// latest statement, whatever order the events came in. See ApplyBatch.
//
// # Read shapes
//
// A resource's row is read in one shape per use, each no wider than its
// readers need: a read per change or per row of a walk of the whole
// catalog decodes only what it compares, since decoding whole rows there
// cost a kilobyte a resource.
//
//	shape          read by                                why that shape
//	Lookup         fetch workers (Lookup by URI,          the columns a change is compared
//	               HeldByHash by md5); the harvester's    with; no links, hops or upstream
//	               baseline and dead-letter checks        hashes (one read per change)
//	HeldEntry      the harvester's walk for the           collection, URI and Source time: a
//	               deletions a baseline implies           walk of every row of a Source
//	HeldCopy       the fixity audit's walk                where the blob is and what its
//	                                                      bytes must be: a walk of every row
//	Resource       fixity's repair (Resource, CopiesOf);  the whole row: a repair restates
//	               tests and benchmarks (SourceResources, what the Source last said, links
//	               Resources)                             included
//	ResourceState  republish.SQLiteCatalog (lists,        the whole row and the op of its last
//	               parts, by origin, by URI), turned      change, which a list entry states;
//	               into republish.Record by its one       republish declares Record, so the
//	               conversion (fromState)                 catalog does not import it
//
// The change log is read as LoggedChange, which republish turns into the
// same Record.
//
// The package never fetches, publishes or acknowledges anything: it only
// applies what EVENTS holds, records what the harvester tells it and
// answers reads.
package catalog
