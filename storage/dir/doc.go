// Package dir keeps blobs as files in a local directory, the store a
// one-machine viaduct uses by default.
//
// A blob with key k lives at root/k[0:2]/k[2:4]/k. Blobs are written to
// root/tmp first (the same file system, so the final step is a link or
// rename), synced, and only then given their name; the directory is synced
// after, so a committed blob survives a crash. A file under its final name
// always holds the bytes its name says. The package never rewrites a
// committed blob.
package dir
