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
// Small blobs committed while others are under way go out together
// (Config.BatchPuts): as one tar per batch, which the server unpacks
// into an object per blob (MinIO's snowball auto-extract), up to
// Config.BatchBlobs blobs a batch and Config.BatchesAtOnce batches at
// once. A lone commit is sent at once as a PUT of its own. The server
// checks no digest of a tar it unpacks, so a batch is confirmed twice:
// the ETag of the request is the md5 of the bytes the server read, which
// must be the md5 of the tar sent, and a HEAD of the batch's last blob
// shows that the tar was unpacked. A batch not confirmed is sent again
// blob by blob, each PUT with its Content-MD5, overwriting whatever the
// server unpacked, before any of its commits returns. New probes the
// server with a batch of one under the temporary prefix; a server that
// stores the tar as it is (AWS S3, Ceph RGW) gets one PUT per blob, and
// so do the blobs of a batch the server later stores as it is.
//
// At most Config.PutsAtOnce single PUTs are under way at once, batches on
// or off (the blobs of a batch sent again one by one count among them); a
// commit past them waits for one to end.
//
// Memory per writer is bounded by the larger of SinglePutSize and PartSize,
// and each batch under way holds a copy of its blobs, at most PartSize past
// the first. A committed blob's bytes never change, but for one window: a
// batch whose bytes changed on the way may overwrite a blob stored already
// until its resend, moments later, puts the right bytes back (see
// docs/configuration.md, "S3 batches"). A small blob committed again is
// PUT again with the same bytes under the same key, which also moves its
// time (the touch of storage.Sweeper); a larger one is touched, not copied
// again. Temporaries a crash leaves behind are removed by New once they
// are a day old; servers drop abandoned multipart uploads themselves (on
// AWS, through a lifecycle rule the operator sets).
package s3
