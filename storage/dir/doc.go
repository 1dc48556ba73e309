// Package dir keeps blobs as files in a local directory, the store a
// one-machine viaduct uses by default.
//
// A blob with key k lives at root/k[0:2]/k[2:4]/k. The package never
// rewrites a committed blob, and a file under its final name always holds
// the bytes its name says.
//
// # Durability
//
// A Commit that returned survives a power loss. The steps, and why each
// is enough:
//
//  1. The bytes go to a temporary file in root/tmp (the same file system,
//     so the final step is a link or rename), which is synced: its data
//     and size are on disk before it has any other name. Each commit syncs
//     its own file, so the commits of many workers overlap and the file
//     system can cover them with one journal commit.
//  2. The fan-out directories are created if missing, without a sync,
//     and the file is linked under its key.
//  3. The directory entry is made durable by syncing root/ab/cd, and, the
//     first time this process links into that fan-out directory, root/ab
//     and root as well (they hold the entries naming the path). A
//     directory found on disk is not trusted: a process that stopped
//     before syncing it may have made it. These syncs are grouped: a
//     commit adds its directories to the round being gathered and waits;
//     one round syncs each directory once for every commit that joined
//     it while the previous round ran. A commit returns only after a
//     sync of each of its directories that began after its link.
//  4. The temporary name is removed; a crash before that leaves a
//     temporary that New removes, while the blob is already durable.
//
// A commit of bytes already stored also syncs the blob's directory before
// it returns, since the existing entry may come from a commit that is
// still waiting for its round. Grouping costs an idle store nothing (a
// lone commit starts its round at once) and under load turns one
// directory sync per blob into a few per round; on ext4 the first sync of
// a round commits the journal and the rest find their entries already
// committed.
package dir
