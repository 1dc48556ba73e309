// Package dir keeps blobs in a local directory, the store a one-machine
// viaduct uses by default.
//
// A blob larger than PackBelow (DefaultPackBelow, 64 KiB) with key k
// lives in a file of its own, at root/k[0:2]/k in a store made by this
// version, at root/k[0:2]/k[2:4]/k in one made before; the file
// root/layout records which (see layout.go). The package never rewrites a
// committed blob, and a file under its final name always holds the bytes
// its name says, even after a crash.
//
// # Packs
//
// A blob of at most PackBelow bytes is a record in a pack file,
// root/packs/NNNNNNNNNN.pack, and a row in the pack index,
// root/packs/index.db (SQLite). A file per blob costs the file system an
// inode, a directory entry and their journal for every blob: 1 KiB blobs
// committed that way cost 100-190 CPU-µs each, most of it in the kernel,
// and held a whole mirror of them to about 2,200 resources a second
// here; packed, the same mirror ran 5-30 % faster, with a third less
// kernel time (docs/benchmarks.md).
//
// A writer holds a blob's bytes in memory until they exceed PackBelow,
// then moves them to a temporary file as below. Committing a packed blob
// queues its record; a round (at most one every SyncInterval, like the
// sync rounds below) runs in one transaction of the index, committed with
// synchronous=FULL: it inserts the rows of the records queued since the
// last round, each key once, appends the records to the active pack in
// one write, fdatasyncs it, and only then commits the rows. A blob the
// index holds already (the same bytes at another URI, or fetched again)
// is touched instead and not written again; as a round hardly ever holds
// one, the round looks for them only when an insert finds a row, and
// then starts again from a savepoint. A blob is visible once its row is
// committed, so a row never points at bytes that are not on disk; a
// crash between the two leaves a record no row names, which is never
// served. Each record begins with a header naming its key
// and length, which Open checks, so a wrong row is an error rather than
// wrong bytes. Every process writes to a pack of its own, begun by its
// first round with a new blob, and a pack is closed at 64 MiB.
//
// DeleteIdle of a packed blob is a single statement on its row,
// serialised by SQLite with the commits that touch it; Touch reads the
// row and then updates it in one such statement, so a touch of a blob
// the store does not hold (every change of a baseline whose Source
// declares sha-256 digests) takes no write lock. A deleted blob's
// bytes stay in its pack until Compact (called by garbage collection
// after its deletions) rewrites a closed pack that is at least half
// garbage: it copies the records the index still names to the active
// pack, checking each against its key, moves their rows unless they were
// deleted or moved meanwhile, and removes the pack once no row names it.
// A reader that opened the pack before keeps reading it. A record that
// no longer matches its key stops its pack's compaction, and the pack
// stays for an operator to look at.
//
// A shared directory (several nodes, a network file system) gives every
// blob a file of its own: SQLite's locking is not safe there. A store
// opened with packing off still reads the packs it has.
//
// A blob the store holds as a file of its own (written before the store
// packed, by a process with packing off, or with a smaller PackBelow)
// stays one: committed again, the file is touched. The index records the
// smallest blob the store may hold as a file (filesFromFact); a commit
// of a smaller one, as every commit of a store that packed from its
// start at one PackBelow, goes to the pack without a path lookup first.
//
// # Durability
//
// A Commit that returned survives a power loss. Syncs are grouped: a
// commit adds what it needs synced to the round being gathered and waits;
// one round covers every commit that joined while the previous round ran,
// and a commit returns only after a round that began after its last step.
// Rounds start at most every SyncInterval (DefaultSyncInterval, 10 ms):
// under a stream of commits a round costs about the same for one blob as
// for a hundred, so spacing them gives fewer, larger rounds and keeps the
// device from flushing back to back. A lone commit on an idle store starts
// its round at once, so grouping costs it nothing. On Linux 5.8 and later
// a round is one syncfs(2) of the file system holding the store,
// elsewhere a sync of each directory gathered.
//
// The steps of a commit, and why each is enough:
//
//  1. The bytes go to a temporary file in root/tmp (the same file system,
//     so the final step is a link or rename). On Linux it is an anonymous
//     file (O_TMPFILE), linked later through /proc/self/fd: it has no
//     name to create in root/tmp or remove from it, which spares every
//     commit two operations on the one directory all commits share, and
//     a crash before its link leaves nothing, since the file system
//     frees it. New checks once that such a file can be made and linked;
//     where not (another system, a file system without O_TMPFILE, no
//     /proc), temporaries are named files.
//  2. The temporary file is made durable before it has its final name:
//     with syncfs, by a round (which writes back every dirty file of the
//     file system and commits its journal); otherwise by an fsync of the
//     file. Without this a crash could leave a final name pointing at a
//     file whose data never reached the disk.
//  3. The fan-out directories are created if missing, without a sync,
//     and the file is linked under its key. The store remembers the
//     fan-out directories it found or made (at most 256, or 65,536 with
//     two levels), so a commit into a known one does not ask the file
//     system again; one removed under the store is made again when a
//     link into it fails.
//  4. The new entries are made durable by a second round: with syncfs,
//     the whole file system again; otherwise the blob's directory and,
//     the first time this process links into it, every directory up to
//     the root (which name its path; a directory found on disk is not
//     trusted, since a process that stopped before syncing it may have
//     made it).
//  5. A named temporary is removed; a crash before that leaves a
//     temporary that New removes, while the blob is already durable. An
//     anonymous one is only closed.
//
// syncfs reports the write-back errors of the whole file system since the
// store's descriptor was opened (in New, before any blob is written), and
// reports each only once. A failed round therefore fails not only its own
// commits but every commit whose bytes were being written while it ran,
// since the error may have been theirs. A commit of bytes already stored
// also waits for a round before it returns, because the existing entry
// may come from a commit still waiting for its own.
//
// With syncfs a round costs one journal commit and one cache flush
// whatever the number of blobs in it; per-directory syncs cost a flush
// each.
//
// # Direct writes
//
// The temporary of a blob expected to be DirectFrom (1 MiB) bytes or more
// is opened with O_DIRECT where the file system takes it (New probes
// once; DirectWrites turns it off): each write that is a whole aligned
// buffer (storage.AlignedBuffer) goes from the writer's memory to the
// disk, with no copy into the page cache and no write-back of it later.
// On 1,000 x 10 MB that halved the CPU a bitstream costs (30-34 ms
// against 59-65, most of the difference the kernel's copy, its
// allocation of cache pages and its reclaim of others once the cache is
// full, as it always is on a mirror that has run a while), and the
// bitstreams no longer push out of the cache what is read. The first
// write that is not aligned (a blob's tail, as a rule) turns O_DIRECT off
// for the rest of the file. Durability is unchanged: a direct write may
// still sit in the disk's volatile cache, and the rounds above flush it
// with the journal.
package dir
