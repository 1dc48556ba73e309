// Package s3 keeps blobs in a bucket of any S3-compatible server (MinIO,
// Ceph RGW, AWS S3) through minio-go.
//
// A blob with key k is the object <prefix>blobs/k. A blob is never visible
// there before all its bytes are stored and hashed:
//
//   - a small blob (up to Config.SinglePutSize) is held in memory while it
//     is written, then stored with one PUT under its final name, which S3
//     makes visible all at once. Its body goes unsigned: the request's
//     signature covers its Content-MD5, which the server checks, so the
//     bytes cannot change on the way without the PUT being refused;
//   - a larger blob is streamed, one part at a time, to a temporary object
//     <prefix>tmp/<random>; Commit checks its length, copies it server-side
//     to its final name and removes the temporary. Its digests are known
//     only at the end, so on plain HTTP its body stays signed in chunks
//     (minio-go's default).
//
// At most Config.PutsAtOnce single PUTs are under way at once; a commit
// past them waits for one to end.
//
// Memory per writer is bounded by the larger of SinglePutSize and PartSize.
// A committed blob's bytes never change: a small blob committed again is
// PUT again with the same bytes under the same key, which also moves its
// time (the touch of storage.Sweeper); a larger one is touched, not copied
// again. Temporaries a crash leaves behind are removed by New once they
// are a day old; servers drop abandoned multipart uploads themselves (on
// AWS, through a lifecycle rule the operator sets).
package s3
