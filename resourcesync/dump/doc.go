// Package dump reads and writes the ZIP packages of ResourceSync Resource
// Dumps and Change Dumps (spec sections 11 and 13): a manifest.xml at the
// root of the package, a Resource Dump Manifest or a Change Dump Manifest,
// and one ZIP entry per bitstream at the path the manifest gives it.
//
// Packages come from other people's servers, so reading treats every byte
// as hostile: a package is read from a file on disk (Spool puts a download
// there under a size cap), never held in memory, and Open refuses, with an
// *Error naming the package and the entry, paths that could escape the
// package, symbolic links, duplicate names, encrypted entries, compression
// methods other than store and deflate, entry and package sizes over
// Limits, compression ratios of a ZIP bomb, overlapping entries, truncated
// or corrupt archives, and a manifest that disagrees with the entries.
// Bytes reach the caller only through a Body, which never reports the end
// of a bitstream whose length or hash is not what the manifest says. Check
// verifies a whole package without handing out bytes, so that a caller can
// refuse a package before any of it takes effect.
//
// Writing (Writer) puts bitstreams into a ZIP, computing lengths and hashes
// as they stream, and writes manifest.xml last, when the package is full
// or done; the same manifest can be copied beside the package.
//
// The package does no network I/O and knows nothing of catalogs or
// storage: it turns packages into verified (entry, bytes) pairs and back.
// docs/dumps.md records the decisions.
package dump
