// Package storage declares the blob store viaduct keeps its copies in. Blobs
// are content-addressed by sha-256 and written atomically: a reader never
// sees a blob whose bytes do not hash to its key.
//
// Beside the blobs, a store keeps a few named objects (Objects): whole
// files under their own prefix, such as the catalog snapshots under
// snapshots/, which no blob listing, sweep or audit ever sees.
//
// Implementations live in subpackages named for what they use: dir (a local
// directory) and s3 (any S3-compatible server, through minio-go). The catalog
// is a role of its own, in package catalog.
package storage
