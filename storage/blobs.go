package storage

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// ErrNotFound is returned (wrapped) when no blob has the key asked for,
// including keys that could never name a blob. Callers test it with
// errors.Is; the republisher answers it with 404.
var ErrNotFound = errors.New("blob not found")

// Blobs is a content-addressed blob store. Every stage that keeps or serves
// bitstreams depends on this interface only, so the directory store and the
// S3 store are interchangeable.
type Blobs interface {
	// Create starts a new blob. Bytes written go to a temporary object
	// while their length and digests are computed; nothing is visible
	// under a key until Commit.
	Create(ctx context.Context) (BlobWriter, error)
	// Open returns the blob's bytes, seekable so HTTP range and
	// conditional requests can be served. The caller closes it.
	Open(ctx context.Context, key string) (Blob, error)
	// Stat describes the blob without opening it.
	Stat(ctx context.Context, key string) (Info, error)
}

// Deleter removes blobs. It is separate from Blobs because only garbage
// collection needs it: harvesting and serving never delete.
type Deleter interface {
	// Delete removes the blob. Deleting a blob that is not there is not an
	// error, so an interrupted collection can simply run again.
	Delete(ctx context.Context, key string) error
}

// BlobWriter receives one blob's bytes. The owner must end it with Commit or
// Abort; deferring Abort right after Create is the usual shape, since Abort
// after Commit does nothing.
type BlobWriter interface {
	io.Writer
	// Sum returns what was written so far: the length and the md5, sha-1
	// and sha-256 digests. A fetch worker compares them with what the
	// Source declared before it commits.
	Sum() (n int64, hashes resourcesync.Hashes)
	// Commit makes the blob visible under its sha-256 key and returns the
	// key. When a blob with that key already exists it is kept as it is
	// (not rewritten) and the temporary object is dropped.
	Commit(ctx context.Context) (key string, err error)
	// Abort discards the temporary object. It is safe after Commit (a
	// no-op) and when called more than once.
	Abort() error
}

// Blob is an open blob: its bytes, seekable, and what the store knows about
// it.
type Blob interface {
	io.ReadSeekCloser
	Info() Info
}

// Info describes a stored blob. ModTime is when the blob was first
// committed: committing the same bytes again does not change it.
type Info struct {
	Key     string // lowercase hex sha-256 of the bytes
	Size    int64
	ModTime time.Time
}
